package engine

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The EOIO step (§14): an EOIO queue delivers one message at a time, so its
// pace is one store call per message — k's outcome and k+1's claim in one
// transaction. The worker that delivered k makes that call itself as soon
// as k's receiver returns, and delivers k+1 when the call has committed
// it DLNG: no hand-off to the loop or the completer, no batch to wait for.
// The loop hears of a step only when it concerns it: the worker stops (its
// slot is free), the claim left more to claim, candidates or a retry due,
// or the store failed or fenced the node.

// stepped is what a worker's own step did, for the loop.
type stepped struct {
	// done says the worker stopped: its slot is free.
	done bool
	// claim is the step's claim, when it said something the loop must
	// know (More, Candidates, NextDue); what it claimed the worker
	// delivers.
	claim *store.ClaimResult
	// unsure says the step failed: its claim may have committed all
	// the same, and the loop reconciles before it claims again. Its
	// outcome went to the completer, which records it.
	unsure bool
	// fenced says the incarnation is over.
	fenced error
}

// work runs deliveries on one worker: c, then the heads its steps claim.
func (l *loop) work(ctx context.Context, c store.Claimed) {
	counted := true
	defer func() {
		if counted {
			l.running.Add(-1)
		}
	}()
	for {
		f := l.attempt(ctx, c)
		o := l.e.outcomeOf(f.claimed, f.err, f.cancelled)
		if l.mayHandOn(f) {
			// No claim rides with it: the outcome goes to the completer
			// straight away, and the loop hears that the worker is free.
			l.held.finished(f.claimed.Message.ID, f.took)
			counted = false
			l.rec.send(pending{Outcome: o, alone: l.running.Add(-1) == 0})
			l.finished <- finished{claimed: f.claimed, sent: true}
			return
		}
		if !l.mayStep(f, o) {
			l.finished <- f
			return
		}
		next, ok := l.step(f, o)
		if !ok {
			return
		}
		if l.halting.Load() {
			// Claimed while the engine began to stop: it is not
			// started, and goes back.
			l.finished <- finished{claimed: next, err: errShutdown, cancelled: errShutdown}
			return
		}
		c = next
	}
}

// attempt runs one delivery: once the lease is known fresh, and cancelled
// if the lease goes stale before it ends (§11: a delivery that outlives its
// queue's lease could race the queue's next owner).
//
// Freshness is checked again right before the receiver is called: a pause
// that falls between await and the call (the node's process stopped, its
// heartbeats with it) would otherwise call the receiver under a lease that
// may be another node's by then.
func (l *loop) attempt(ctx context.Context, c store.Claimed) finished {
	start := l.e.clock()
	var err, cancelled error
	for {
		if err = l.e.lease.await(ctx); err != nil {
			if ctx.Err() != nil {
				cancelled = context.Cause(ctx)
			}
			break
		}
		dctx, stop := l.e.lease.bind(ctx)
		if l.e.beforeCall != nil {
			l.e.beforeCall()
		}
		if !l.e.lease.isFresh() {
			stop()
			continue // stale since await: wait for the next heartbeat's verdict
		}
		start = l.e.clock()
		err = l.e.deliver(dctx, c)
		if dctx.Err() != nil {
			cancelled = context.Cause(dctx)
		}
		stop()
		break
	}
	return finished{claimed: c, err: err, took: l.e.clock().Sub(start), cancelled: cancelled}
}

// mayHandOn says whether the worker sends the outcome of f to the
// completer itself: an EO message's, on a store that commits transactions
// side by side — no claim rides with it (finish) — while the loop runs on.
func (l *loop) mayHandOn(f finished) bool {
	return f.claimed.Message.QoS != domain.EOIO && !l.e.st.SerialWrites() && !l.halting.Load() &&
		l.held.has(f.claimed.Message.ID)
}

// mayStep says whether the worker records o, the outcome of f, itself with
// its queue's next head: an EOIO message's outcome that leaves it settled,
// while the loop neither stops nor isolates a candidate, and while no other
// message is DLNG for the node (in flight, claimed, or waiting to be
// recorded) — the completer would then record it alone and at once, in a
// commit of its own as well. With others, the completer's batch shares one
// commit among their outcomes and claims: commits per message, not the pace
// of one queue, bound many queues.
func (l *loop) mayStep(f finished, o store.Outcome) bool {
	if f.claimed.Message.QoS != domain.EOIO || o.Kind == store.OutcomeHandBack || l.stepsOff.Load() {
		return false
	}
	return l.held.alone(f.claimed.Message.ID)
}

// step records o, the outcome of f, and claims in the same store call,
// its queue's next head first. It returns the message claimed, if any, for
// the worker to deliver; false when the worker stops — it told the loop.
func (l *loop) step(f finished, o store.Outcome) (store.Claimed, bool) {
	id := f.claimed.Message.ID
	cp := l.e.claimParams(l.node)
	cp.Limit = 1
	p := store.RecordParams{Node: l.node, Outcomes: []store.Outcome{o}, Claim: &cp}
	// A reconciliation waits until what the step claims is in the
	// ledger.
	l.held.claiming.RLock()
	ctx, cancel := l.e.storeContext(context.Background())
	res, err := l.e.st.Record(ctx, p)
	cancel()
	if err == nil {
		var claimed []store.Claimed
		if res.Claim != nil {
			claimed = res.Claim.Claimed
		}
		l.held.settle([]string{id}, claimed)
	}
	l.held.claiming.RUnlock()
	if err != nil {
		if errors.Is(err, store.ErrFenced) {
			l.steps <- stepped{done: true, fenced: err}
			return store.Claimed{}, false
		}
		l.e.storeFailed("recording outcomes", err)
		// The completer keeps the outcome and records it when the store
		// answers; the claim may have committed.
		l.held.finished(id, f.took)
		l.rec.send(pending{Outcome: o, alone: true})
		l.steps <- stepped{done: true, unsure: true}
		return store.Claimed{}, false
	}
	l.e.storeOK()
	var out stepped
	if after := res.Applied[0]; after != nil {
		l.e.report(o, after, f.took)
	} else {
		err := res.Conflicts[id]
		if errors.Is(err, store.ErrFenced) {
			out.fenced = err
		}
		l.e.log.Warn("message changed during delivery; its outcome is dropped", "message", id, "err", err)
	}
	var next *store.Claimed
	if c := res.Claim; c != nil {
		l.e.reportRouted(c)
		for id, err := range c.Damaged {
			l.e.log.Error("a message the store cannot read is left alone", "message", id, "err", err)
		}
		if len(c.Claimed) > 0 {
			next = &c.Claimed[0]
		}
		if c.More || c.Candidates > 0 || !c.NextDue.IsZero() || len(c.Claimed) > 1 {
			out.claim = c
		}
	}
	l.e.inFlight.Store(int64(l.held.len()))
	if next == nil || out.fenced != nil {
		out.done = true
		if next != nil {
			// Fenced: the claim is the new owner's to recover.
			out.claim = nil
		}
	}
	if out.done || out.claim != nil {
		l.steps <- out
	}
	if out.done {
		return store.Claimed{}, false
	}
	return *next, true
}

// stepDone handles what a worker's step told the loop. It returns an error
// when the incarnation is over.
func (l *loop) stepDone(s stepped) error {
	if s.fenced != nil {
		return s.fenced
	}
	if s.done {
		l.inflight--
	}
	if s.unsure {
		l.unsure = true
	}
	if c := s.claim; c != nil {
		if c.Candidates > 0 {
			l.candidates, l.ready = true, true
		}
		if c.More {
			l.ready = true
		}
		if !c.NextDue.IsZero() {
			if due := time.Now().Add(c.NextDue.Sub(c.Now)); l.nextDue.IsZero() || due.Before(l.nextDue) {
				l.nextDue = due
			}
		}
		// Limit 1 claims one: should a store return more, they are
		// started by the loop.
		if len(c.Claimed) > 1 {
			l.queued = append(l.queued, c.Claimed[1:]...)
		}
	}
	l.e.inFlight.Store(int64(l.held.len()))
	return nil
}
