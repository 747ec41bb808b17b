package engine

import (
	"context"
	"errors"
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
	// stale is cancelled when the lease is found stale (watch); a
	// renewal after that makes a new one.
	stale       context.Context
	cancelStale context.CancelCauseFunc
	// renewed wakes watch.
	renewed chan struct{}
}

func newLease(ttl time.Duration, now func() time.Time) *lease {
	if now == nil {
		now = time.Now
	}
	l := &lease{ttl: ttl, now: now, verdict: make(chan struct{}), renewed: make(chan struct{}, 1)}
	l.stale, l.cancelStale = context.WithCancelCause(context.Background())
	return l
}

// errLeaseExpired is why a delivery is cancelled when the lease goes stale.
var errLeaseExpired = errors.New("handed back: the node's lease expired during the delivery (no heartbeat reached the store)")

// bind returns a context for a delivery that ends with ctx, or when the
// lease goes stale: a delivery must not outlive the lease under which its
// message was claimed, since another node may own the queue by then.
func (l *lease) bind(ctx context.Context) (context.Context, func()) {
	l.mu.Lock()
	stale := l.stale
	l.mu.Unlock()
	dctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(stale, func() { cancel(context.Cause(stale)) })
	return dctx, func() {
		stop()
		cancel(nil)
	}
}

// watch cancels the deliveries bound to the lease when it goes stale —
// its last renewal began a TTL ago — until ctx ends.
func (l *lease) watch(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		l.mu.Lock()
		left := l.ttl - l.now().Sub(l.fresh)
		if left <= 0 && l.stale.Err() == nil {
			l.cancelStale(errLeaseExpired)
		}
		l.mu.Unlock()
		if left <= 0 {
			left = time.Hour // until a renewal
		}
		resetTimer(timer, left)
		select {
		case <-ctx.Done():
			return
		case <-l.renewed:
		case <-timer.C:
		}
	}
}

// renew notes that the lease is fresh from start on; l.mu is held.
func (l *lease) renew(start time.Time) {
	if !start.After(l.fresh) {
		return
	}
	l.fresh = start
	if l.stale.Err() != nil && l.now().Sub(l.fresh) < l.ttl {
		l.stale, l.cancelStale = context.WithCancelCause(context.Background())
	}
	select {
	case l.renewed <- struct{}{}:
	default:
	}
}

// alive records that a write begun at start renewed the lease.
func (l *lease) alive(start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renew(start)
}

// beat records the verdict of a heartbeat begun at start and wakes the
// workers waiting for it.
func (l *lease) beat(start time.Time, fenced bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fenced {
		l.fenced = true
		l.cancelStale(errStale)
	} else {
		l.renew(start)
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

// isFresh says the lease is known fresh now, without waiting: a worker asks
// again right before it calls the receiver, since a pause can fall between
// await and the call (§11).
func (l *lease) isFresh() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.fenced && l.now().Sub(l.fresh) < l.ttl
}

// errStale is why a worker of a fenced node did not deliver.
var errStale = fmt.Errorf("not delivered: this node's lease expired and a heartbeat found it fenced: %w", store.ErrFenced)
