package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// lease is what the node knows of its own liveness (§11): the local,
// monotonic time at which the last write that renewed it began — its join
// or a heartbeat. (A claim or a record proves the node alive but renews
// nothing.) The store declares the node dead cluster.lease_ttl after its
// last heartbeat, as the database measures it, which is never before that
// local start plus the TTL. A node that was paused (SIGSTOP, a frozen virtual
// machine, a long garbage collection) past its TTL may have lost its
// queues, and the messages it claimed before the pause with them: a worker
// calls a receiver only while the lease is known fresh, and otherwise waits
// for the verdict of the next heartbeat — alive, it delivers; fenced, the
// engine stops and the new owner's crash recovery hands the message on.
type lease struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	// fresh is when the last write that renewed the lease began.
	fresh time.Time
	// verdict is closed by the next heartbeat's verdict, and replaced.
	verdict chan struct{}
	fenced  bool
}

func newLease(ttl time.Duration, now func() time.Time) *lease {
	if now == nil {
		now = time.Now
	}
	return &lease{ttl: ttl, now: now, verdict: make(chan struct{})}
}

// alive records that a write begun at start renewed the lease.
func (l *lease) alive(start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if start.After(l.fresh) {
		l.fresh = start
	}
}

// beat records the verdict of a heartbeat begun at start and wakes the
// workers waiting for it.
func (l *lease) beat(start time.Time, fenced bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fenced {
		l.fenced = true
	} else if start.After(l.fresh) {
		l.fresh = start
	}
	close(l.verdict)
	l.verdict = make(chan struct{})
}

// await returns nil once the lease is known fresh, waiting for heartbeats
// as long as it is not. It returns an error wrapping store.ErrFenced when a
// heartbeat found the node fenced — the engine stops, and the message is
// the new owner's — or ctx's error when ctx ended first; the receiver is
// not called then, and the outcome the loop makes of the error is refused
// by the store (fenced) or hands the message back (shutdown).
func (l *lease) await(ctx context.Context) error {
	for {
		l.mu.Lock()
		fenced, fresh, verdict := l.fenced, l.now().Sub(l.fresh) < l.ttl, l.verdict
		l.mu.Unlock()
		switch {
		case fenced:
			return errStale
		case fresh:
			return nil
		}
		select {
		case <-verdict:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// errStale is why a worker of a fenced node did not deliver.
var errStale = fmt.Errorf("not delivered: this node's lease expired and a heartbeat found it fenced: %w", store.ErrFenced)
