package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/store"
)

// TestLeaseFreshness checks when a worker may call a receiver: while the
// join or the last heartbeat began less than the TTL ago; past
// it, only after a heartbeat begun since says the node is alive; never once
// a heartbeat found it fenced.
func TestLeaseFreshness(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLease(10*time.Second, func() time.Time { return now })
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	require.Error(t, l.await(cancelled), "never proved alive")
	l.alive(now)
	require.NoError(t, l.await(cancelled), "just joined")

	// Paused past the TTL: a worker waits for a heartbeat's verdict.
	before := now
	now = now.Add(11 * time.Second)
	require.Error(t, l.await(cancelled), "stale: waits for a heartbeat")
	// A heartbeat begun before the pause proves nothing about now.
	l.beat(before.Add(time.Second), false)
	require.Error(t, l.await(cancelled), "a heartbeat begun before the pause")

	// The worker waits; the next heartbeat succeeds: it delivers.
	got := make(chan error)
	go func() { got <- l.await(context.Background()) }()
	l.beat(now, false)
	require.NoError(t, <-got, "alive after the heartbeat")

	// Stale again; the heartbeat finds the node fenced: it never delivers.
	now = now.Add(time.Minute)
	go func() { got <- l.await(context.Background()) }()
	l.beat(now, true)
	require.ErrorIs(t, <-got, store.ErrFenced, "fenced")
	require.ErrorIs(t, l.await(context.Background()), store.ErrFenced, "fenced stays fenced")
}
