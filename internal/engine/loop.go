package engine

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// routeBatch bounds the inbound messages one claim routes.
const routeBatch = 256

// batchWindow is how long an outcome may wait for others to share its
// commit while deliveries are still in flight: a commit costs the same for
// one outcome as for many, so under load a short wait multiplies
// throughput. It is not waited out when nothing else is in flight.
const batchWindow = time.Millisecond

// storeRetry is how long the engine waits after the store failed (a full
// disk, a database down) before it tries again.
const storeRetry = time.Second

// loop is the one goroutine that decides what the engine claims, starts and
// records. Deliveries run on goroutines of their own and report back on
// finished.
type loop struct {
	e    *Engine
	node store.Node
	// claimed holds, by id, the messages this node has DLNG, as claimed,
	// until their outcome is recorded.
	claimed map[string]*claim
	// queued are claimed outbound messages waiting for a worker.
	queued []store.Claimed
	// inflight counts the deliveries running.
	inflight int
	finished chan finished
	// outcomes wait to be recorded, in one transaction with the next claim;
	// firstOutcome is when the oldest of them arrived.
	outcomes     []store.Outcome
	firstOutcome time.Time
	// ready says a claim may find something: the loop was woken, an
	// outcome was recorded, or the last claim stopped at its limit.
	ready   bool
	nextDue time.Time
	// candidates says the last claim left blacklist candidates: the engine
	// lets what it has in flight finish, then claims one alone (§4);
	// isolated is the id of that one while it is in flight.
	candidates bool
	isolated   string
	stopping   bool
	// failedAt is when the store last refused to commit; the loop tries
	// again storeRetry after it, whatever wakes it meanwhile.
	failedAt time.Time
}

// claim is a message this node has DLNG.
type claim struct {
	store.Claimed
	// took is how long its delivery took, once it finished.
	took time.Duration
}

// finished is a delivery's result.
type finished struct {
	claimed store.Claimed
	err     error
	took    time.Duration
}

func newLoop(e *Engine, node store.Node) *loop {
	return &loop{
		e: e, node: node, claimed: map[string]*claim{}, ready: true,
		finished: make(chan finished, e.cfg.Workers),
	}
}

// run claims, delivers and records until ctx ends or the node is fenced.
func (l *loop) run(ctx context.Context, failed <-chan error) error {
	// Deliveries run on their own context: a shutdown lets them finish
	// within engine.shutdown_timeout, then cancels them.
	dctx, cancelDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDeliveries()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wakeups := l.e.st.Wakeups()
	for {
		l.collect()
		if l.e.recovered.Swap(false) {
			l.candidates, l.ready = true, true
		}
		if l.pending() && !l.batching() {
			if err := l.step(); err != nil {
				if errors.Is(err, store.ErrFenced) {
					l.abandon(cancelDeliveries)
					return err
				}
				l.e.log.Error("the store failed; trying again in 1s", "err", err)
				l.failedAt = time.Now()
			} else {
				l.start(dctx)
				continue
			}
		}
		l.start(dctx)
		if l.idle() {
			l.e.emit(Event{Kind: EventIdle})
		}
		resetTimer(timer, l.wait())
		select {
		case <-ctx.Done():
			return l.shutdown(cancelDeliveries)
		case err := <-failed:
			l.abandon(cancelDeliveries)
			return err
		case f := <-l.finished:
			l.finish(f)
		case <-wakeups:
			l.ready = true
		case <-l.e.poke:
			l.ready = true
		case <-timer.C:
			l.ready = true
		}
	}
}

// collect takes the results of the deliveries that finished, without
// waiting.
func (l *loop) collect() {
	for {
		select {
		case f := <-l.finished:
			l.finish(f)
		default:
			return
		}
	}
}

// storeFailed says whether the store refused to commit less than storeRetry
// ago.
func (l *loop) storeFailed() bool {
	return !l.failedAt.IsZero() && time.Since(l.failedAt) < storeRetry
}

// batching says whether the outcomes waiting should wait a little longer
// for those of the deliveries still in flight, to share their commit.
func (l *loop) batching() bool {
	return len(l.outcomes) > 0 && l.inflight > 0 && !l.stopping && time.Since(l.firstOutcome) < batchWindow
}

// pending says whether there is something to record or to claim now.
func (l *loop) pending() bool {
	return !l.storeFailed() && (len(l.outcomes) > 0 || l.claimParams(false) != nil)
}

func (l *loop) idle() bool {
	return len(l.claimed) == 0 && len(l.outcomes) == 0 && !l.ready && !l.storeFailed()
}

// wait is how long the loop may sleep: until the batch window closes,
// until the next retry is due, or a second after the store failed.
func (l *loop) wait() time.Duration {
	if l.storeFailed() {
		return storeRetry - time.Since(l.failedAt)
	}
	if l.batching() {
		return batchWindow - time.Since(l.firstOutcome)
	}
	if l.nextDue.IsZero() {
		return -1
	}
	now, err := l.e.st.Now(context.Background())
	if err != nil {
		return storeRetry
	}
	return max(l.nextDue.Sub(now), 0)
}

// claimParams says what to claim now, or nil. Outcomes about to be
// recorded may make messages ready (an EOIO queue's next head), so a claim
// rides with them even when the last claim found nothing more.
func (l *loop) claimParams(withOutcomes bool) *store.ClaimParams {
	if l.stopping || !(l.ready || withOutcomes) || l.isolated != "" {
		return nil
	}
	p := &store.ClaimParams{Node: l.node, Window: l.e.cfg.EOWindow, Router: &l.e.router, RouteLimit: routeBatch,
		Candidates: store.CandidatesAsAny}
	if l.e.cfg.Blacklisting.Enabled {
		p.Candidates = store.CandidatesSkip
	}
	if l.candidates {
		// A candidate is delivered alone: first everything this node
		// has DLNG must be settled.
		if len(l.claimed) > 0 || len(l.outcomes) > 0 {
			return nil
		}
		p.Candidates, p.Limit, p.RouteLimit = store.CandidatesAlone, 1, 0
		return p
	}
	// The engine keeps claimed what its workers deliver and half as many
	// again, waiting for a worker: a commit costs as much for one message as
	// for many, and workers that find their next message at hand need not
	// wait for one. A claimed message is DLNG, so those waiting count as in
	// flight if the node dies — they become blacklist candidates, never
	// blacklisted (§4). A single worker claims only what it delivers, so
	// that a crash is blamed on the one delivery in flight. With nothing to
	// claim for, routing waits too: what it would make ready could not
	// start anyway. The outcomes recorded in the same transaction free
	// their places.
	p.Limit = l.e.cfg.Workers + l.e.cfg.Workers/2 - len(l.claimed)
	if withOutcomes {
		p.Limit += len(l.outcomes)
	}
	if p.Limit <= 0 {
		return nil
	}
	return p
}

// step records the outcomes waiting and claims, in one transaction.
func (l *loop) step() error {
	claim := l.claimParams(len(l.outcomes) > 0)
	ctx := context.Background()
	var res *store.ClaimResult
	if len(l.outcomes) > 0 {
		outcomes := l.outcomes
		rec, err := l.e.st.Record(ctx, store.RecordParams{Node: l.node, Outcomes: outcomes, Claim: claim})
		if err != nil {
			return err
		}
		l.outcomes = nil
		if err := l.recorded(outcomes, rec); err != nil {
			return err
		}
		res = rec.Claim
		if claim == nil {
			l.ready = true // the outcomes may have made heads ready
		}
	} else {
		var err error
		if res, err = l.e.st.Claim(ctx, *claim); err != nil {
			return err
		}
	}
	if claim != nil {
		l.took(claim, res)
	}
	return nil
}

// took handles what a claim returned.
func (l *loop) took(p *store.ClaimParams, res *store.ClaimResult) {
	l.ready, l.nextDue = res.More, res.NextDue
	switch {
	case p.Candidates != store.CandidatesAlone:
		l.candidates = res.Candidates > 0
		l.ready = l.ready || l.candidates // one is to be claimed alone
	case len(res.Claimed) == 0:
		// The candidate is gone (an operator acted) or not due yet.
		l.candidates, l.ready = false, true
	default:
		l.isolated = res.Claimed[0].Message.ID
	}
	l.e.reportRouted(res)
	for id, err := range res.Damaged {
		l.e.log.Error("a message the store cannot read is left alone", "message", id, "err", err)
	}
	for _, c := range res.Claimed {
		l.claimed[c.Message.ID] = &claim{Claimed: c}
		l.queued = append(l.queued, c)
	}
	l.e.inFlight.Store(int64(len(l.claimed)))
}

// recorded reports the outcomes a Record applied. An outcome refused because
// the node lost its lease stops the engine.
func (l *loop) recorded(outcomes []store.Outcome, rec *store.RecordResult) error {
	var fenced error
	for i, o := range outcomes {
		c := l.claimed[o.ID]
		delete(l.claimed, o.ID)
		if o.ID == l.isolated {
			// The candidate's delivery ended: claim normally again,
			// which finds the next candidate if there is one.
			l.isolated, l.candidates, l.ready = "", false, true
		}
		after := rec.Applied[i]
		if after == nil {
			err := rec.Conflicts[o.ID]
			if errors.Is(err, store.ErrFenced) {
				fenced = err
			}
			l.e.log.Warn("message changed during delivery; its outcome is dropped", "message", o.ID, "err", err)
			continue
		}
		var took time.Duration
		if c != nil {
			took = c.took
		}
		l.e.report(o, after, took)
	}
	l.e.inFlight.Store(int64(len(l.claimed)))
	return fenced
}

// start begins deliveries while workers are free.
func (l *loop) start(ctx context.Context) {
	for l.inflight < l.e.cfg.Workers && len(l.queued) > 0 && !l.stopping {
		c := l.queued[0]
		l.queued = l.queued[1:]
		l.inflight++
		go func() {
			var err error
			start := l.e.clock()
			if err = l.e.lease.await(ctx); err == nil {
				start = l.e.clock()
				err = l.e.deliver(ctx, c)
			}
			l.finished <- finished{claimed: c, err: err, took: l.e.clock().Sub(start)}
		}()
	}
}

// finish turns a finished delivery into an outcome to record.
func (l *loop) finish(f finished) {
	l.inflight--
	c, ok := l.claimed[f.claimed.Message.ID]
	if !ok {
		return // handed back already: it ignored its cancellation
	}
	c.took = f.took
	if len(l.outcomes) == 0 {
		l.firstOutcome = time.Now()
	}
	l.outcomes = append(l.outcomes, l.e.outcomeOf(f.claimed, f.err, l.stopping))
}

// shutdown stops claiming, hands back what was claimed but not started,
// lets the deliveries in flight finish within engine.shutdown_timeout,
// cancels the rest, and hands back those that ignore the cancellation.
func (l *loop) shutdown(cancel context.CancelFunc) error {
	l.stopping = true
	for _, c := range l.queued {
		l.outcomes = append(l.outcomes, handBack(c))
	}
	l.queued = nil
	if l.inflight > 0 {
		l.e.log.Info("engine stopping: waiting for deliveries in flight", "in_flight", l.inflight,
			"timeout", l.e.cfg.ShutdownTimeout.String())
	}
	deadline := time.NewTimer(l.e.cfg.ShutdownTimeout)
	defer deadline.Stop()
	var grace <-chan time.Time
	for l.flush() && l.inflight > 0 {
		select {
		case f := <-l.finished:
			l.finish(f)
			l.collect()
		case <-deadline.C:
			cancel()
			grace = time.After(cancelGrace)
		case <-grace:
			l.e.log.Warn("deliveries ignored their cancellation; their messages are handed back", "in_flight", l.inflight)
			for _, c := range l.claimed {
				l.outcomes = append(l.outcomes, handBack(c.Claimed))
			}
			l.inflight = 0
		}
	}
	if !l.flush() {
		return errors.New("engine stopped with messages DLNG that the store did not take back; the next start recovers them")
	}
	return nil
}

// cancelGrace is how long a cancelled delivery has to return.
const cancelGrace = 2 * time.Second

// flush records the outcomes waiting, retrying while the store fails, up
// to a few times; it reports whether nothing is left to record.
func (l *loop) flush() bool {
	for try := 0; len(l.outcomes) > 0; try++ {
		outcomes := l.outcomes
		rec, err := l.e.st.Record(context.Background(), store.RecordParams{Node: l.node, Outcomes: outcomes})
		if err == nil {
			l.outcomes = nil
			err = l.recorded(outcomes, rec)
			if err == nil {
				continue
			}
		}
		if errors.Is(err, store.ErrFenced) || try == 2 {
			l.e.log.Error("recording outcomes at shutdown failed", "err", err)
			return false
		}
		time.Sleep(storeRetry)
	}
	return true
}

// abandon ends the loop of a node that lost its leases: another node owns
// its queues now and recovers what it had DLNG, so it records nothing.
func (l *loop) abandon(cancel context.CancelFunc) {
	l.e.log.Error("this node's leases were taken over; it stops delivering", "node", l.node.ID)
	cancel()
}

func handBack(c store.Claimed) store.Outcome {
	return store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeHandBack}
}

func resetTimer(t *time.Timer, d time.Duration) {
	if d < 0 {
		d = time.Hour
	}
	t.Reset(d)
}
