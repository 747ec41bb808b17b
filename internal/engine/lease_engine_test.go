package engine_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
)

// gatedHeartbeats is a store whose heartbeats, once gated, each wait for
// the verdict the test gives.
type gatedHeartbeats struct {
	engine.Store
	mu      sync.Mutex
	gated   bool
	entered chan struct{}
	verdict chan error
}

func (s *gatedHeartbeats) Heartbeat(ctx context.Context, p store.HeartbeatParams) (*store.HeartbeatResult, error) {
	s.mu.Lock()
	gated := s.gated
	s.mu.Unlock()
	if !gated {
		return s.Store.Heartbeat(ctx, p)
	}
	select {
	case s.entered <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case err := <-s.verdict:
		if err != nil {
			return nil, err
		}
		return s.Store.Heartbeat(ctx, p)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestStaleLeaseWaitsForHeartbeat: once more than cluster.lease_ttl passed
// since the node's last heartbeat began (a pause), a claimed message is not
// handed to its receiver until a heartbeat begun since succeeds; when that
// heartbeat finds the node fenced, the engine does not deliver it under the
// old lease, but joins again and delivers it as a new incarnation.
func TestStaleLeaseWaitsForHeartbeat(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		t.Run(map[bool]string{false: "alive", true: "fenced"}[fenced], func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.cfg.Cluster.Heartbeat = 5 * time.Millisecond
			b.cfg.Cluster.LeaseTTL = time.Second
			ep := b.newEndpoint(t, "WMS")
			var mu sync.Mutex
			var skew time.Duration
			b.monotonic = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return time.Now().Add(skew)
			}
			st := &gatedHeartbeats{entered: make(chan struct{}), verdict: make(chan error)}
			b.wrap = func(s engine.Store) engine.Store { st.Store = s; return st }
			first := b.send(t, eo("WMS", "before"))[0]
			b.start(t)
			b.waitFor(t, "the first delivery, recorded", func() bool {
				out := b.outbound(t, first.ID)
				return len(ep.all()) == 1 && len(out) == 1 && out[0].Status == domain.StatusDLVD
			})

			// The node "pauses": heartbeats are held, its clock jumps past
			// the TTL.
			st.mu.Lock()
			st.gated = true
			st.mu.Unlock()
			<-st.entered
			mu.Lock()
			skew = time.Minute
			mu.Unlock()
			// The heartbeat held began before the jump: its success
			// proves nothing about now.
			st.verdict <- nil
			msg := b.send(t, eo("WMS", "after"))[0]
			b.waitFor(t, "the message routed and its outbound claimed", func() bool {
				out := b.outbound(t, msg.ID)
				return len(out) == 1 && out[0].Status == domain.StatusDLNG
			})
			// The next heartbeat begins after the jump.
			<-st.entered
			require.Len(t, ep.all(), 1, "delivered with a stale lease")
			if !fenced {
				st.verdict <- nil
				b.waitFor(t, "the delivery once the heartbeat succeeded", func() bool { return len(ep.all()) == 2 })
				return
			}
			// Fenced: the node's queues were taken over. It delivers
			// nothing under the old lease, joins again as a new
			// incarnation and recovers its old one without counting a
			// crash: the message is delivered once, by the new one.
			st.mu.Lock()
			st.gated = false
			st.mu.Unlock()
			st.verdict <- store.ErrFenced
			b.waitFor(t, "the delivery by the new incarnation", func() bool {
				out := b.outbound(t, msg.ID)
				return len(out) == 1 && out[0].Status == domain.StatusDLVD
			})
			require.Len(t, ep.all(), 2, "delivered once more, by the new incarnation")
			select {
			case err := <-b.done:
				t.Fatalf("a fenced engine exited (%v); it must join again", err)
			default:
			}
			require.Zero(t, b.outbound(t, msg.ID)[0].Crashes, "losing the lease is not a crash")
		})
	}
}

// TestPauseBeforeTheReceiverCall: a pause that falls after a worker found
// the lease fresh, and before it calls the receiver (§11), does not deliver
// under the old lease: the worker checks the lease once more right before
// the call, finds it stale, and waits for the next heartbeat's verdict —
// fenced here, so the message is delivered once, by the node's next
// incarnation, and no crash is counted.
func TestPauseBeforeTheReceiverCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Cluster.Heartbeat = 5 * time.Millisecond
	b.cfg.Cluster.LeaseTTL = time.Second
	ep := b.newEndpoint(t, "WMS")
	var mu sync.Mutex
	var skew time.Duration
	b.monotonic = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(skew)
	}
	st := &gatedHeartbeats{entered: make(chan struct{}), verdict: make(chan error)}
	b.wrap = func(s engine.Store) engine.Store { st.Store = s; return st }
	var armed atomic.Bool
	paused := make(chan struct{})
	b.beforeCall = func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		// The node "pauses" here: its heartbeats stop — the one that
		// began last is held — and its clock jumps past the TTL.
		st.mu.Lock()
		st.gated = true
		st.mu.Unlock()
		<-st.entered
		mu.Lock()
		skew = time.Minute
		mu.Unlock()
		close(paused)
	}
	first := b.send(t, eo("WMS", "before"))[0]
	b.start(t)
	b.waitFor(t, "the first delivery, recorded", func() bool {
		out := b.outbound(t, first.ID)
		return len(ep.all()) == 1 && len(out) == 1 && out[0].Status == domain.StatusDLVD
	})

	armed.Store(true)
	msg := b.send(t, eo("WMS", "after"))[0]
	<-paused
	// The heartbeat held began before the jump: its success proves
	// nothing about now. The worker waits for the verdict of one begun
	// after it.
	st.verdict <- nil
	<-st.entered
	require.Len(t, ep.all(), 1, "delivered under a lease that went stale before the call")
	st.mu.Lock()
	st.gated = false
	st.mu.Unlock()
	st.verdict <- store.ErrFenced
	b.waitFor(t, "the delivery by the new incarnation", func() bool {
		out := b.outbound(t, msg.ID)
		return len(out) == 1 && out[0].Status == domain.StatusDLVD
	})
	require.Len(t, ep.all(), 2, "delivered once, by the new incarnation")
	require.Zero(t, b.outbound(t, msg.ID)[0].Crashes, "a pause is not a crash")
}
