package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// DefaultWatchInterval is how often --watch takes a snapshot.
const DefaultWatchInterval = 2 * time.Second

// minWatchInterval keeps --watch from hammering the store or the server.
const minWatchInterval = 100 * time.Millisecond

// WatchOptions are the --watch and --interval flags of a list command.
type WatchOptions struct {
	Watch    bool
	Interval time.Duration
	// intervalSet says that --interval was given.
	intervalSet bool
}

// AddWatchFlags adds --watch (-w) and --interval to a list command.
func AddWatchFlags(cmd *cobra.Command, o *WatchOptions) {
	fl := cmd.Flags()
	fl.BoolVarP(&o.Watch, "watch", "w", false,
		"list again every --interval until interrupted (Ctrl-C: exit 130): redrawn in place on a terminal, otherwise one snapshot after another, each table under a line with its time")
	fl.DurationVar(&o.Interval, "interval", DefaultWatchInterval, "with --watch: how often to list again")
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		o.intervalSet = c.Flags().Changed("interval")
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// check refuses an interval that is not one, or one without --watch.
func (o *WatchOptions) check() error {
	switch {
	case o.intervalSet && !o.Watch:
		return FlagError("--interval %s takes effect with --watch; add -w", o.Interval)
	case o.Watch && o.Interval < minWatchInterval:
		return FlagError("--interval %s is too short: at least %s", o.Interval, minWatchInterval)
	}
	return nil
}

// Snapshot writes one listing to out, its hints (nothing matched, more
// pages) through hintf.
type Snapshot func(ctx context.Context, out io.Writer, hintf func(format string, args ...any)) error

// Watch runs snapshot once — or, with --watch, once now and again on every
// tick of the Factory's ticker until ctx ends: Ctrl-C ends it as it ends
// every other command (context.Canceled: exit 130), --timeout without an
// error. On a terminal each snapshot replaces the last on the screen,
// under a line that says what is watched and when it was listed, hints
// included (kubectl get -w, watch(1)); off a terminal the snapshots follow
// one another, each table under the same line, so that a log tells when
// each was taken (the machine formats stay as they are, for their
// parsers). title names the command (queuectl queue list).
func (f *Factory) Watch(ctx context.Context, o WatchOptions, title string, snapshot Snapshot) error {
	if err := o.check(); err != nil {
		return err
	}
	if !o.Watch {
		return snapshot(ctx, f.IO.Out, f.Hintf)
	}
	var tick <-chan time.Time
	for n := 0; ; n++ {
		err := f.watchSnapshot(ctx, o, title, n, snapshot)
		if ctx.Err() != nil {
			return watchEnd(ctx) // the watch was ended while it listed
		}
		if err != nil {
			return err
		}
		if tick == nil {
			// The interval counts from the first snapshot on.
			var stop func()
			tick, stop = f.ticker(o.Interval)
			defer stop()
		}
		select {
		case <-ctx.Done():
			return watchEnd(ctx)
		case <-tick:
		}
	}
}

// watchEnd is how a watch ends with its context: interrupted (exit 130)
// by Ctrl-C or a signal, without an error at its --timeout.
func watchEnd(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return nil
}

// watchSnapshot takes the n-th snapshot of a watch.
func (f *Factory) watchSnapshot(ctx context.Context, o WatchOptions, title string, n int, snapshot Snapshot) error {
	if !f.IO.StdoutTTY {
		if format, err := f.Format(); err == nil && format.Tabular() {
			if n > 0 {
				fmt.Fprintln(f.IO.Out)
			}
			fmt.Fprintln(f.IO.Out, watchTitle(o, title, f.Now()))
		}
		return snapshot(ctx, f.IO.Out, f.Hintf)
	}
	// On a terminal the hints belong to the snapshot they describe: they
	// are drawn with it, under the table.
	var screen, hints bytes.Buffer
	err := snapshot(ctx, &screen, func(format string, args ...any) {
		fmt.Fprintf(&hints, format+"\n", args...)
	})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("\x1b[H\x1b[2J") // home, clear the screen
	fmt.Fprintf(&b, "%s\n\n", watchTitle(o, title, f.Now()))
	b.Write(screen.Bytes())
	if c, err := f.Config(); hints.Len() > 0 && err == nil && !c.Quiet {
		for _, line := range strings.SplitAfter(strings.TrimSuffix(hints.String(), "\n"), "\n") {
			b.WriteString("queuectl: " + strings.TrimSuffix(line, "\n") + "\n")
		}
	}
	_, err = f.IO.Out.Write(b.Bytes())
	return err
}

// watchTitle is the line over each snapshot: what is watched, and when
// the snapshot was taken.
func watchTitle(o WatchOptions, title string, at time.Time) string {
	return fmt.Sprintf("Every %s: %s    %s", o.Interval, title, at.UTC().Format(time.RFC3339))
}

// ticker returns the Factory's ticker, time's by default.
func (f *Factory) ticker(d time.Duration) (<-chan time.Time, func()) {
	if f.Ticker != nil {
		return f.Ticker(d)
	}
	t := time.NewTicker(d)
	return t.C, t.Stop
}
