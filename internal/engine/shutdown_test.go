package engine_test

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/receiver"
)

// slowEndpoint answers only when release opens; a delivery the engine
// cancels first ends unanswered.
func slowEndpoint(t *testing.T, b *testBundle) (*endpoint, gate) {
	t.Helper()
	ep := b.newEndpoint(t, "WMS")
	release := make(gate)
	ep.respond(func(r *http.Request, _ arrival, _ int) int {
		release.wait(r)
		return http.StatusOK
	})
	return ep, release
}

func TestShutdownHandsBackDeliveriesThatDoNotFinish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.ShutdownTimeout = 50 * time.Millisecond
	ep, release := slowEndpoint(t, b)
	in := b.send(t, eo("WMS", "slow"))
	b.start(t)
	b.waitFor(t, "the delivery to start", func() bool { return len(ep.all()) == 1 })

	require.NoError(t, b.shutdown(t))
	handed := b.eventsOf(engine.EventHandedBack)
	require.Len(t, handed, 1)
	m := b.message(t, handed[0].Message.ID)
	require.Equal(t, in[0].ID, m.ID)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Attempts, "a handed back attempt does not count")
	require.Zero(t, m.Crashes, "a clean stop is not a crash")
	require.Empty(t, m.Node)
	h := last(m.History)
	require.Equal(t, "DLNG>TBDL", transitions([]domain.HistoryEntry{h})[0])
	require.Equal(t, "handed back at shutdown", h.Reason)
	require.Empty(t, b.eventsOf(engine.EventDelivered))
	require.Empty(t, b.eventsOf(engine.EventWaiting))

	// The next start delivers it as a first attempt, not as a crash
	// candidate.
	release.open()
	b.start(t)
	b.waitDelivered(t, 1)
	m = b.message(t, m.ID)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 1, m.Attempts)
	require.Zero(t, m.Crashes)
	require.Empty(t, b.eventsOf(engine.EventBlacklisted))
}

func TestShutdownLetsDeliveriesFinishWithinTheTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.ShutdownTimeout = deadline
	ep, release := slowEndpoint(t, b)
	b.send(t, eo("WMS", "slow"))
	b.start(t)
	b.waitFor(t, "the delivery to start", func() bool { return len(ep.all()) == 1 })

	b.stop()
	b.waitFor(t, "the engine to stop", func() bool { return b.logged("engine stopping: waiting for deliveries in flight") })
	release.open()
	require.NoError(t, b.shutdown(t))

	require.Empty(t, b.eventsOf(engine.EventHandedBack))
	delivered := b.eventsOf(engine.EventDelivered)
	require.Len(t, delivered, 1)
	m := b.message(t, delivered[0].Message.ID)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 1, m.Attempts)
	require.Equal(t, []string{"slow"}, ep.accepted())
}

func TestShutdownHandsBackARunningCommand(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.ShutdownTimeout = 50 * time.Millisecond
	dir := t.TempDir()
	// The command tells the test it runs by writing to a FIFO, then runs
	// until it is killed.
	started := filepath.Join(dir, "started")
	require.NoError(t, syscall.Mkfifo(started, 0o600))
	script := filepath.Join(dir, "archive.sh")
	require.NoError(t, receiver.WriteExecutable(script, []byte("#!/bin/sh\necho started > \"$1\"\nexec sleep 30\n")))
	b.cfg.Receivers["ARCHIVE"] = config.Receiver{Type: "exec", Command: []string{script, started}, Timeout: deadline}
	b.send(t, eo("ARCHIVE", "x"))
	b.start(t)

	read := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(started) // returns once the command has written
		read <- err
	}()
	select {
	case err := <-read:
		require.NoError(t, err)
	case <-time.After(deadline):
		t.Fatalf("the command did not start within %s", deadline)
	}

	require.NoError(t, b.shutdown(t))
	handed := b.eventsOf(engine.EventHandedBack)
	require.Len(t, handed, 1)
	m := b.message(t, handed[0].Message.ID)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Attempts)
	require.Zero(t, m.Crashes)
}
