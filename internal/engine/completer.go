package engine

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// maxRecordBatch bounds the outcomes of one transaction.
const maxRecordBatch = 256

// recordWindow is how long an outcome may wait for others to share its
// commit while deliveries are in flight: a commit costs about the same for
// one outcome as for many.
const recordWindow = time.Millisecond

// completer records the outcomes of deliveries in batches, on a connection
// of its own, while the loop goes on claiming (§14; River's BatchCompleter).
// A batch is recorded once it is as large as the node's workers, once its
// first outcome waited recordWindow, or at once when no delivery is in
// flight that could join it: under load many outcomes share a commit, and
// an idle node's outcome waits for nothing. An outcome of an EOIO message
// claims in the same transaction (alone on the node, its worker makes that
// call itself: step.go). After a failure it keeps its outcomes and
// tries again with a growing pause: a database outage loses none of them.
type completer struct {
	e    *Engine
	node store.Node
	held *ledger
	// in carries the outcomes from the loop; reconcile the loop's requests
	// for a reconciliation, and drain its request to report when nothing
	// is left to record.
	in        chan pending
	reconcile chan struct{}
	drain     chan chan struct{}
	// results carries back to the loop what each transaction did.
	results chan recorded
}

// send hands the completer an outcome to record.
func (c *completer) send(p pending) {
	c.in <- p
}

// pending is an outcome waiting to be recorded.
type pending struct {
	store.Outcome
	// next says the outcome is an EOIO message's: the transaction that
	// records it claims too — its queue's next head, or another queue's
	// in turn — and the worker that delivered it is kept for that claim.
	next bool
	// alone says no delivery was in flight when it was sent: nothing is
	// coming to share its commit.
	alone bool
}

// recorded is what one transaction of the completer did, for the loop.
type recorded struct {
	// settled lists the outcomes that left the ledger: recorded, or
	// refused because the message is no longer this node's to settle.
	settled []string
	// freedRoom says an outcome may have let a queue start more than the
	// transaction's own claim took: one of an EO message, or one that
	// claimed nothing.
	freedRoom bool
	// freed counts the worker slots the outcomes with next kept.
	freed int
	// claim holds the heads claimed with the outcomes.
	claim *store.ClaimResult
	// unsure says a transaction that claimed failed: its commit is
	// unknown, and so are the heads it may have claimed.
	unsure bool
	// reconciled says a reconciliation ran: err is its failure, if any.
	reconciled bool
	err        error
	// fenced says the incarnation is over: another node took over.
	fenced error
}

func newCompleter(e *Engine, node store.Node, held *ledger) *completer {
	return &completer{
		e: e, node: node, held: held,
		in:        make(chan pending, 4*e.cfg.Workers+16),
		reconcile: make(chan struct{}, 1),
		drain:     make(chan chan struct{}),
		results:   make(chan recorded, 4*e.cfg.Workers+16),
	}
}

// run records until ctx ends.
func (c *completer) run(ctx context.Context) {
	var batch []pending
	var drained []chan struct{}
	failures := 0
	var retryAt, first time.Time
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		n := len(batch)
		batch = c.gather(batch)
		if n == 0 && len(batch) > 0 {
			first = time.Now()
		}
		due := c.due(batch, first, len(drained) > 0)
		if len(batch) > 0 && !due.After(time.Now()) && !time.Now().Before(retryAt) {
			left, err := c.record(ctx, batch)
			batch = left
			if err == nil {
				failures = 0
				first = time.Now()
				continue
			}
			if ctx.Err() != nil {
				return
			}
			failures++
			retryAt = time.Now().Add(backoff(failures))
		}
		if len(batch) == 0 {
			for _, d := range drained {
				close(d)
			}
			drained = nil
		}
		wait := time.Hour
		if len(batch) > 0 {
			wait = time.Until(due)
			if retryAt.After(due) {
				wait = time.Until(retryAt)
			}
		}
		resetTimer(timer, wait)
		select {
		case <-ctx.Done():
			return
		case p := <-c.in:
			batch = append(batch, p)
		case <-c.reconcile:
			c.reconcileHeld(ctx)
		case d := <-c.drain:
			drained = append(drained, d)
		case <-timer.C:
		}
	}
}

// due is when batch, whose first outcome arrived at first, is to be
// recorded: at once when it is full, when its last outcome came with no
// delivery in flight, or when a drain waits for it; else recordWindow after
// its first outcome.
func (c *completer) due(batch []pending, first time.Time, draining bool) time.Time {
	if len(batch) == 0 {
		return time.Time{}
	}
	if len(batch) >= c.e.cfg.Workers || batch[len(batch)-1].alone || draining {
		return first
	}
	return first.Add(recordWindow)
}

// gather takes the outcomes that arrived, without waiting.
func (c *completer) gather(batch []pending) []pending {
	for len(batch) < maxRecordBatch {
		select {
		case p := <-c.in:
			batch = append(batch, p)
		default:
			return batch
		}
	}
	return batch
}

// backoff is how long the completer and the loop pause after failures in a
// row: from a tenth of a second to five.
func backoff(failures int) time.Duration {
	return min(100*time.Millisecond<<min(failures-1, 6), 5*time.Second)
}

// record records up to maxRecordBatch outcomes of batch in one transaction,
// and returns those left to record: all of batch when the store failed.
func (c *completer) record(ctx context.Context, batch []pending) ([]pending, error) {
	now := batch[:min(len(batch), maxRecordBatch)]
	outcomes := make([]store.Outcome, len(now))
	freed := 0
	for i, p := range now {
		outcomes[i] = p.Outcome
		if p.next {
			freed++
		}
	}
	p := store.RecordParams{Node: c.node, Outcomes: outcomes}
	if freed > 0 {
		// An EOIO queue's next head rides in the transaction of its
		// queue's outcome (§14): one commit per message. Queues take
		// turns, as in the loop's claims, and the claim routes, so that
		// a queue that got its first message meanwhile gets its turn.
		cp := c.e.claimParams(c.node)
		cp.Limit = freed
		p.Claim = &cp
	}
	res, err := c.e.recordSplitting(ctx, p)
	if err != nil {
		if errors.Is(err, store.ErrFenced) {
			c.results <- recorded{fenced: err}
			return batch, err
		}
		if ctx.Err() == nil {
			c.e.storeFailed("recording outcomes", err)
		}
		// A failed transaction that claimed may have committed: the
		// loop reconciles before it claims again.
		c.results <- recorded{unsure: p.Claim != nil}
		return batch, err
	}
	c.e.storeOK()
	ids := make([]string, len(outcomes))
	for i, o := range outcomes {
		ids[i] = o.ID
	}
	var claimed []store.Claimed
	if res.Claim != nil {
		claimed = res.Claim.Claimed
	}
	helds := c.held.settle(ids, claimed)
	// A batch recorded apart claimed nothing; its first transaction,
	// which failed, is taken as unsure, as any failed claim is.
	out := recorded{freed: freed, claim: res.Claim, unsure: res.split && p.Claim != nil}
	for i, o := range outcomes {
		held := helds[i]
		out.settled = append(out.settled, o.ID)
		out.freedRoom = out.freedRoom || !now[i].next
		after := res.Applied[i]
		if err, ok := res.Damaged[o.ID]; ok {
			c.e.log.Error("the store cannot read a message whose outcome it records; it is left as the store has it",
				"message", o.ID, "err", err)
			continue
		}
		if parked, ok := res.parked[i]; ok {
			o = parked
		}
		if after == nil {
			err := res.Conflicts[o.ID]
			if errors.Is(err, store.ErrFenced) {
				out.fenced = err
			}
			c.e.log.Warn("message changed during delivery; its outcome is dropped", "message", o.ID, "err", err)
			continue
		}
		var took time.Duration
		if held != nil {
			took = held.took
		}
		c.e.report(o, after, took)
	}
	if res.Claim != nil {
		c.e.reportRouted(res.Claim)
	}
	c.results <- out
	return batch[len(now):], nil
}

// reconcileHeld hands back what the store says the node holds DLNG and the
// ledger does not know of. The loop asks for it while no claim of its own
// is under way, and the completer's claims are its own transactions.
func (c *completer) reconcileHeld(ctx context.Context) {
	c.held.claiming.Lock()
	sctx, cancel := c.e.storeContext(ctx)
	res, err := c.e.st.Reconcile(sctx, store.ReconcileParams{Node: c.node, Held: c.held.ids()})
	cancel()
	c.held.claiming.Unlock()
	if errors.Is(err, store.ErrFenced) {
		c.results <- recorded{fenced: err}
		return
	}
	if err == nil {
		for _, m := range res.HandedBack {
			c.e.log.Warn("a claim whose commit was not confirmed is handed back", "message", m.ID, "queue", m.Queue)
			c.e.emit(Event{Kind: EventHandedBack, Message: m})
		}
	}
	c.results <- recorded{reconciled: true, err: err}
}

// waitDrained waits until every outcome sent so far is recorded, or until
// ctx ends; it reports whether all were.
func (c *completer) waitDrained(ctx context.Context) bool {
	d := make(chan struct{})
	select {
	case c.drain <- d:
	case <-ctx.Done():
		return false
	}
	select {
	case <-d:
		return true
	case <-ctx.Done():
		return false
	}
}
