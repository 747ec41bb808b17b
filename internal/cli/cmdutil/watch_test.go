package cmdutil_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// watchBundle is a Factory whose --watch ticks by hand, and a snapshot
// that says when it is done.
type watchBundle struct {
	f          *cmdutil.Factory
	out, err   bytes.Buffer
	ticks      chan time.Time
	snapshots  chan int
	n          int
	tickerMade time.Duration
}

func setupWatch(t *testing.T, tty bool, format string) *watchBundle {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(config, nil, 0o600))
	flags := pflag.NewFlagSet("queuectl", pflag.ContinueOnError)
	flags.String("config", config, "")
	flags.String("output", "table", "")
	require.NoError(t, flags.Set("output", format))
	b := &watchBundle{ticks: make(chan time.Time), snapshots: make(chan int)}
	b.f = cmdutil.New(&cmdutil.IOStreams{Out: &b.out, ErrOut: &b.err, StdoutTTY: tty})
	b.f.GlobalFlags = flags
	b.f.Now = func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) }
	b.f.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
		b.tickerMade = d
		return b.ticks, func() {}
	}
	return b
}

func (b *watchBundle) snapshot(_ context.Context, w io.Writer, hintf func(string, ...any)) error {
	b.n++
	fmt.Fprintf(w, "ROW %d\n", b.n)
	hintf("hint %d", b.n)
	b.snapshots <- b.n
	return nil
}

// run watches for three snapshots — one at once, one on each of two ticks
// — and ends the watch as Ctrl-C would: interrupted, as every command.
func (b *watchBundle) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- b.f.Watch(ctx, cmdutil.WatchOptions{Watch: true, Interval: 2 * time.Second}, "queuectl queue list", b.snapshot)
	}()
	require.Equal(t, 1, <-b.snapshots)
	b.ticks <- time.Time{}
	require.Equal(t, 2, <-b.snapshots)
	b.ticks <- time.Time{}
	require.Equal(t, 3, <-b.snapshots)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled, "Ctrl-C interrupts a watch (exit 130)")
	require.Equal(t, 2*time.Second, b.tickerMade)
}

// Off a terminal, every snapshot follows the last (tables a blank line
// apart, each under the line that says when it was taken), its hints on
// stderr: a log, or a pipe.
func TestWatchOffATerminal(t *testing.T) {
	t.Parallel()
	b := setupWatch(t, false, "table")
	b.run(t)
	title := "Every 2s: queuectl queue list    2026-03-10T12:00:00Z\n"
	require.Equal(t, title+"ROW 1\n\n"+title+"ROW 2\n\n"+title+"ROW 3\n", b.out.String())
	require.Equal(t, "queuectl: hint 1\nqueuectl: hint 2\nqueuectl: hint 3\n", b.err.String())

	b = setupWatch(t, false, "jsonl")
	b.run(t)
	require.Equal(t, "ROW 1\nROW 2\nROW 3\n", b.out.String(), "machine formats have no blank lines")
}

// On a terminal, each snapshot replaces the last on the screen, with a
// line that says what is watched and when, and its hints.
func TestWatchOnATerminal(t *testing.T) {
	t.Parallel()
	b := setupWatch(t, true, "table")
	b.run(t)
	var want strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&want, "\x1b[H\x1b[2JEvery 2s: queuectl queue list    2026-03-10T12:00:00Z\n\nROW %d\nqueuectl: hint %d\n", i, i)
	}
	require.Equal(t, want.String(), b.out.String())
	require.Empty(t, b.err.String())
}

// Without --watch a command lists once; with it, an error ends the watch.
func TestWatchOnceAndErrors(t *testing.T) {
	t.Parallel()
	b := setupWatch(t, false, "table")
	go func() { <-b.snapshots }()
	require.NoError(t, b.f.Watch(context.Background(), cmdutil.WatchOptions{}, "queuectl queue list", b.snapshot))
	require.Equal(t, "ROW 1\n", b.out.String())

	failing := func(context.Context, io.Writer, func(string, ...any)) error { return fmt.Errorf("store down") }
	require.EqualError(t, b.f.Watch(context.Background(), cmdutil.WatchOptions{Watch: true, Interval: time.Second}, "x", failing),
		"store down")
	require.ErrorContains(t, b.f.Watch(context.Background(), cmdutil.WatchOptions{Watch: true, Interval: time.Millisecond}, "x", failing),
		"--interval 1ms is too short: at least 100ms")
}
