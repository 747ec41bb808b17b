package cli_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// screen is a terminal that tells each write — on a terminal a snapshot of
// --watch is one write — to whoever waits for it.
type screen struct {
	mu     sync.Mutex
	writes []string
	wrote  chan struct{}
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.writes = append(s.writes, string(p))
	s.mu.Unlock()
	s.wrote <- struct{}{}
	return len(p), nil
}

// TestWatchCommands runs each command of --watch on a terminal for two
// snapshots, ticked by hand: each is drawn in place under a line naming
// the command, and shows the store as it is at the tick.
func TestWatchCommands(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.run(t, "x", "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS")
	require.Equal(t, 0, r.code, r.stderr)

	for _, c := range []struct {
		args        []string
		first, then string
	}{
		{[]string{"queue", "list"}, "XBTI0000  EO   inbound  ACTIVE", "XBTI0000  EO   inbound  STOPPED"},
		{[]string{"queue", "blocked"}, "queuectl: no queue is blocked", "queuectl: no queue is blocked"},
		{[]string{"blacklist", "list"}, "queuectl: no message is blacklisted", "queuectl: no message is blacklisted"},
		{[]string{"node", "list"}, "queuectl: embedded store: no node is serving it", "queuectl: embedded store: no node is serving it"},
	} {
		name := strings.Join(c.args, " ")
		scr := &screen{wrote: make(chan struct{})}
		var errOut bytes.Buffer
		f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: scr, ErrOut: &errOut, StdoutTTY: true})
		ticks := make(chan time.Time)
		f.Ticker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		go func() {
			code <- cli.Run(ctx, f, append(append([]string{"--config", b.config, "--db", b.db}, c.args...), "-w"))
		}()
		select {
		case <-scr.wrote:
		case n := <-code:
			t.Fatalf("%s ended with %d before its first snapshot: %s", name, n, errOut.String())
		}
		r := b.run(t, "", "queue", "stop", "XBTI0000")
		require.Equal(t, 0, r.code, r.stderr)
		ticks <- time.Time{}
		<-scr.wrote
		cancel()
		require.Equal(t, 130, <-code, "%s: Ctrl-C ends a watch as it ends any command: %s", name, errOut.String())
		require.Contains(t, errOut.String(), "queuectl: interrupted\n", name)
		require.Len(t, scr.writes, 2, name)
		for i, want := range []string{c.first, c.then} {
			require.True(t, strings.HasPrefix(scr.writes[i], "\x1b[H\x1b[2JEvery 2s: queuectl "+name+"    "), "%s: %q", name, scr.writes[i])
			require.Contains(t, scr.writes[i], want, name)
		}
		r = b.run(t, "", "queue", "start", "XBTI0000")
		require.Equal(t, 0, r.code, r.stderr)
	}

	// --interval needs --watch, and a sensible length.
	r = b.run(t, "", "queue", "list", "--interval", "5s")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "queuectl: --interval 5s takes effect with --watch; add -w")
	r = b.run(t, "", "node", "list", "-w", "--interval", "10ms")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--interval 10ms is too short: at least 100ms")
}

// TestWatchOffTerminal: off a terminal each table snapshot follows the last
// under a line that says when it was taken, so a log tells when a queue
// blocked; the machine formats stay parseable, without it. Ctrl-C ends the
// watch with 130, --timeout without an error.
func TestWatchOffTerminal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.run(t, "x", "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS")
	require.Equal(t, 0, r.code, r.stderr)

	watch := func(format string) (string, string) {
		t.Helper()
		scr := &screen{wrote: make(chan struct{})}
		var errOut bytes.Buffer
		f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: scr, ErrOut: &errOut})
		at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
		f.Now = func() time.Time { return at }
		ticks := make(chan time.Time)
		f.Ticker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
		ctx, cancel := context.WithCancel(context.Background())
		code := make(chan int, 1)
		go func() {
			code <- cli.Run(ctx, f, []string{"--config", b.config, "--db", b.db, "queue", "list", "-w", "-o", format})
		}()
		// A snapshot off a terminal is several writes: wait for its row.
		rows := func(n int) {
			for {
				<-scr.wrote
				scr.mu.Lock()
				got := strings.Count(strings.Join(scr.writes, ""), "XBTI0000")
				scr.mu.Unlock()
				if got == n {
					return
				}
			}
		}
		rows(1)
		at = at.Add(2 * time.Second)
		go func() { ticks <- time.Time{} }()
		rows(2)
		cancel()
		go func() { // the writes the end may make
			for range scr.wrote {
			}
		}()
		require.Equal(t, 130, <-code, errOut.String())
		scr.mu.Lock()
		defer scr.mu.Unlock()
		return strings.Join(scr.writes, ""), errOut.String()
	}

	out, errOut := watch("table")
	require.Regexp(t, `\AEvery 2s: queuectl queue list    2026-03-02T10:00:00Z\nNAME .*\nXBTI0000 .*\n\n`+
		`Every 2s: queuectl queue list    2026-03-02T10:00:02Z\nNAME .*\nXBTI0000 .*\n\z`, out)
	require.Equal(t, "queuectl: interrupted\n", errOut)
	out, _ = watch("jsonl")
	require.NotContains(t, out, "Every")
	require.Equal(t, 2, strings.Count(out, `"name":"XBTI0000"`))

	// --timeout ends a watch as planned: exit 0.
	r = b.run(t, "", "queue", "list", "-w", "--timeout", "300ms")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Every 2s: queuectl queue list    ")
}
