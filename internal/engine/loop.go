package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// routeBatch bounds the inbound messages one claim routes.
const routeBatch = 256

// loop is the goroutine that claims and starts deliveries (§14): it claims
// as many ready messages as it has free workers, in one transaction, and
// hands them to workers; the outcomes go to the completer, which records
// them on a transaction of its own while the loop claims on. Claiming never
// waits for recording. An EOIO outcome with nothing else DLNG on the node
// is the exception: its worker records it and claims the queue's next head
// in one store call and delivers that head itself (step.go). The node never
// holds more DLNG messages whose receiver has not returned than
// engine.workers: a crash makes at most that many blacklist candidates.
type loop struct {
	e    *Engine
	node store.Node
	held *ledger
	rec  *completer
	// queued are claimed messages waiting for a worker: the heads the
	// completer claimed with the outcomes of EOIO messages, a candidate.
	queued []store.Claimed
	// inflight counts the deliveries running; reserved the workers kept
	// for the claims that ride with the outcomes of EOIO messages.
	inflight, reserved int
	finished           chan finished
	// ready says a claim may find something: the loop was woken, an
	// outcome was recorded, the poll came, or the last claim stopped at
	// its limit. polled is when the last claim ran.
	ready  bool
	polled time.Time
	// nextDue is when, on the engine's clock, the next retry is due.
	nextDue time.Time
	// candidates says the last claim left blacklist candidates: the engine
	// lets what it has in flight finish and be recorded, then claims one
	// alone (§4); isolated is the id of that one until its outcome is
	// recorded.
	candidates bool
	isolated   string
	// unsure says a claim's commit is unknown: the loop reconciles before
	// it claims again; reconciling says a reconciliation is under way.
	unsure, reconciling bool
	// failures counts the store's failures in a row; the loop claims again
	// backoff(failures) after failedAt.
	failures int
	failedAt time.Time
	stopping bool
	// steps carries what the workers' own EOIO steps did; running counts
	// the workers that have not sent their last outcome; stepsOff says
	// the workers leave their outcomes to the loop — it stops, or
	// isolates a candidate —, halting that it stops.
	steps    chan stepped
	running  atomic.Int64
	stepsOff atomic.Bool
	halting  atomic.Bool
}

// finished is a delivery's result.
type finished struct {
	claimed store.Claimed
	err     error
	took    time.Duration
	// cancelled holds why the delivery's context ended before it did: a
	// shutdown, or the lease.
	cancelled error
	// sent says the worker sent the outcome to the completer itself.
	sent bool
}

func newLoop(e *Engine, node store.Node) *loop {
	held := newLedger()
	return &loop{
		e: e, node: node, held: held, rec: newCompleter(e, node, held), ready: true,
		finished: make(chan finished, e.cfg.Workers),
		steps:    make(chan stepped, 4*e.cfg.Workers+16),
	}
}

// errShutdown is why the deliveries of a clean stop are cancelled.
var errShutdown = errors.New("handed back at shutdown")

// run claims and delivers until ctx ends — then it shuts down cleanly — or
// until the incarnation is over (an error wrapping store.ErrFenced, from
// the store or from failed, the heartbeats' verdict).
func (l *loop) run(ctx context.Context, failed <-chan error) error {
	// Deliveries run on their own context: a shutdown lets them finish
	// within engine.shutdown_timeout, then cancels them.
	dctx, cancelDeliveries := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelDeliveries(errShutdown)
	rctx, stopCompleter := context.WithCancel(context.WithoutCancel(ctx))
	completed := make(chan struct{})
	go func() {
		defer close(completed)
		l.rec.run(rctx)
	}()
	defer func() {
		stopCompleter()
		<-completed
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wakeups := l.e.st.Wakeups()
	for {
		if err := l.collect(); err != nil {
			return l.abandon(cancelDeliveries, err)
		}
		if l.e.recovered.Swap(false) {
			l.candidates, l.ready = true, true
		}
		if l.mayClaim() {
			if err := l.claim(); err != nil {
				return l.abandon(cancelDeliveries, err)
			}
			l.start(dctx)
			continue
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
			return l.abandon(cancelDeliveries, err)
		case f := <-l.finished:
			l.finish(f)
		case s := <-l.steps:
			if err := l.stepDone(s); err != nil {
				return l.abandon(cancelDeliveries, err)
			}
		case r := <-l.rec.results:
			if err := l.recorded(r); err != nil {
				return l.abandon(cancelDeliveries, err)
			}
		case <-wakeups:
			l.ready = true
		case <-l.e.poke:
			l.ready = true
		case <-timer.C:
			l.ready = true
		}
	}
}

// collect takes the results of the deliveries that finished and of the
// completer's transactions, without waiting.
func (l *loop) collect() error {
	for {
		select {
		case f := <-l.finished:
			l.finish(f)
		case s := <-l.steps:
			if err := l.stepDone(s); err != nil {
				return err
			}
		case r := <-l.rec.results:
			if err := l.recorded(r); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// slots is how many more messages the loop may claim: free workers, less
// those kept for the claims of the completer and those claimed and not
// started yet.
func (l *loop) slots() int {
	return l.e.cfg.Workers - l.inflight - l.reserved - len(l.queued)
}

// settled says the node holds nothing DLNG: nothing in flight, nothing
// waiting to be recorded.
func (l *loop) settled() bool {
	return l.inflight == 0 && l.reserved == 0 && len(l.queued) == 0 && l.held.len() == 0
}

// storeFailing says the store failed less than the backoff ago.
func (l *loop) storeFailing() bool {
	return l.failures > 0 && time.Since(l.failedAt) < backoff(l.failures)
}

// claimCooldown is how long after a claim the loop waits before the next
// one while fewer than half of its workers are free (River's
// FetchCooldown): a claim costs about the same for one message as for many.
const claimCooldown = time.Millisecond

// cooling says the last claim was less than claimCooldown ago and fewer
// than half of the workers are free: the next claim waits to take more.
func (l *loop) cooling() bool {
	return l.inflight > 0 && 2*l.slots() < l.e.cfg.Workers && time.Since(l.polled) < claimCooldown
}

// mayClaim says whether to claim (or reconcile) now.
func (l *loop) mayClaim() bool {
	switch {
	case l.stopping || !l.ready || l.storeFailing() || l.reconciling || l.isolated != "" || l.slots() <= 0 || l.cooling():
		return false
	case l.candidates:
		// A candidate is delivered alone: first everything this node
		// has DLNG must be settled.
		return l.settled()
	}
	return true
}

func (l *loop) idle() bool {
	return l.settled() && !l.ready && !l.storeFailing()
}

// wait is how long the loop may sleep: until the backoff after a failure
// ends, or — when it knows of nothing to claim — until the next poll or the
// next retry is due. Otherwise what it waits for comes on a channel.
func (l *loop) wait() time.Duration {
	if l.storeFailing() {
		return backoff(l.failures) - time.Since(l.failedAt)
	}
	if l.stopping {
		return -1
	}
	if l.ready {
		if l.slots() > 0 && l.cooling() {
			return claimCooldown - time.Since(l.polled)
		}
		return -1
	}
	d := l.e.cfg.PollInterval - time.Since(l.polled)
	if !l.nextDue.IsZero() {
		d = min(d, time.Until(l.nextDue))
	}
	return max(d, 0)
}

// claimParams is what the engine's claims have in common.
func (e *Engine) claimParams(node store.Node) store.ClaimParams {
	// Only the configured receivers (§8): the messages of any other wait
	// TBDL for a node that has it, rather than fail here.
	p := store.ClaimParams{Node: node, Window: e.cfg.EOWindow, Router: &e.router, RouteLimit: routeBatch,
		Candidates: store.CandidatesAsAny, Receivers: e.names}
	if e.cfg.Blacklisting.Enabled {
		p.Candidates = store.CandidatesSkip
	}
	return p
}

// claim claims what the free workers can deliver — or, first, reconciles
// after a claim whose commit is unknown. It returns an error only when the
// incarnation is over.
func (l *loop) claim() error {
	if l.unsure {
		l.reconciling = true
		l.rec.reconcile <- struct{}{}
		return nil
	}
	p := l.e.claimParams(l.node)
	p.Limit = l.slots()
	if l.candidates {
		p.Candidates, p.Limit, p.RouteLimit = store.CandidatesAlone, 1, 0
	}
	l.polled = time.Now()
	ctx, cancel := l.e.storeContext(context.Background())
	res, err := l.e.st.Claim(ctx, p)
	cancel()
	if err != nil {
		if errors.Is(err, store.ErrFenced) {
			return err
		}
		// A claim that failed may have committed all the same (a lost
		// reply): what it claimed is DLNG for this node, unknown to it.
		l.unsure = !errors.Is(err, store.ErrOverdue)
		l.fail("claiming", err)
		return nil
	}
	l.e.storeOK()
	l.failures = 0
	l.held.add(res.Claimed)
	l.e.reportRouted(res)
	l.ready = res.More
	l.nextDue = time.Time{}
	if !res.NextDue.IsZero() {
		l.nextDue = time.Now().Add(res.NextDue.Sub(res.Now))
	}
	l.took(p.Candidates, res)
	return nil
}

// fail notes a failure of the store.
func (l *loop) fail(what string, err error) {
	l.failures++
	l.failedAt = time.Now()
	l.e.storeFailed(what, err)
}

// took handles the messages a claim returned, the loop's own or the
// completer's, claimed in mode.
func (l *loop) took(mode store.CandidateMode, res *store.ClaimResult) {
	switch {
	case mode != store.CandidatesAlone:
		if res.Candidates > 0 {
			l.candidates, l.ready = true, true // one is to be claimed alone
		}
	case len(res.Claimed) == 0:
		// The candidate is gone (an operator acted) or not due yet.
		l.candidates, l.ready = false, true
	default:
		l.isolated = res.Claimed[0].Message.ID
	}
	for id, err := range res.Damaged {
		l.e.log.Error("a message the store cannot read is left alone", "message", id, "err", err)
	}
	l.queued = append(l.queued, res.Claimed...)
	l.e.inFlight.Store(int64(l.held.len()))
}

// recorded handles what a transaction of the completer did. It returns an
// error when the incarnation is over.
func (l *loop) recorded(r recorded) error {
	if r.fenced != nil {
		return r.fenced
	}
	l.reserved -= r.freed
	if r.unsure {
		l.unsure = true
	}
	if r.reconciled {
		l.reconciling = false
		if r.err != nil {
			l.fail("reconciling", r.err)
		} else {
			l.unsure = false
		}
	}
	for _, id := range r.settled {
		if id == l.isolated {
			// The candidate's delivery ended and is recorded: claim
			// normally again, which finds the next candidate if any.
			l.isolated, l.candidates = "", false
		}
	}
	if r.freedRoom || r.claim != nil && r.claim.More {
		l.ready = true // the outcomes may have made room, or heads ready
	}
	if r.claim != nil {
		l.took(store.CandidatesSkip, r.claim)
	}
	l.e.inFlight.Store(int64(l.held.len()))
	return nil
}

// start begins deliveries while workers are free.
func (l *loop) start(ctx context.Context) {
	l.stepsOff.Store(l.stopping || l.isolated != "" || l.candidates)
	for l.inflight < l.e.cfg.Workers && len(l.queued) > 0 && !l.stopping {
		c := l.queued[0]
		l.queued = l.queued[1:]
		l.inflight++
		l.running.Add(1)
		go l.work(ctx, c)
	}
}

// finish turns a finished delivery into an outcome for the completer.
func (l *loop) finish(f finished) {
	l.inflight--
	if f.sent {
		return
	}
	id := f.claimed.Message.ID
	if !l.held.has(id) {
		return // handed back already: it ignored its cancellation
	}
	l.held.finished(id, f.took)
	o := l.e.outcomeOf(f.claimed, f.err, f.cancelled)
	p := pending{Outcome: o}
	// An EOIO queue's next head rides with its outcome (§14), and so
	// does every claim on a store that commits one transaction at a time:
	// the worker is kept for that claim.
	p.next = (f.claimed.Message.QoS == domain.EOIO || l.e.st.SerialWrites()) && o.Kind != store.OutcomeHandBack &&
		!l.stopping && l.isolated == "" && !l.candidates
	if p.next {
		l.reserved++
	}
	p.alone = l.inflight == 0
	l.rec.send(p)
}

// shutdown stops claiming, hands back what was claimed but not started,
// lets the deliveries in flight finish within engine.shutdown_timeout,
// cancels the rest, hands back those that ignore the cancellation, and
// waits until every outcome is recorded — as long as the shutdown timeout
// allows, however long the store is unreachable.
func (l *loop) shutdown(cancel context.CancelCauseFunc) error {
	l.stopping = true
	l.halting.Store(true)
	l.stepsOff.Store(true)
	for _, c := range l.queued {
		l.rec.send(pending{Outcome: handBack(c)})
	}
	l.queued = nil
	if l.inflight > 0 {
		l.e.log.Info("engine stopping: waiting for deliveries in flight", "in_flight", l.inflight,
			"timeout", l.e.cfg.ShutdownTimeout.String())
	}
	timeout := l.e.cfg.ShutdownTimeout
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var grace <-chan time.Time
	for l.inflight > 0 {
		select {
		case f := <-l.finished:
			l.finish(f)
		case s := <-l.steps:
			_ = l.stepDone(s)
		case r := <-l.rec.results:
			_ = l.recorded(r)
		case <-deadline.C:
			cancel(errShutdown)
			grace = time.After(cancelGrace)
		case <-grace:
			l.e.log.Warn("deliveries ignored their cancellation; their messages are handed back", "in_flight", l.inflight)
			for _, c := range l.held.claims() {
				l.rec.send(pending{Outcome: handBack(c)})
			}
			l.inflight = 0
		}
	}
	// The outcomes get what is left of the shutdown timeout, and at
	// least the time of one store call.
	ctx, stop := context.WithTimeout(context.Background(), max(timeout, l.e.cfg.storeTimeout()))
	defer stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case r := <-l.rec.results:
				_ = l.recorded(r)
			}
		}
	}()
	if !l.rec.waitDrained(ctx) {
		n, noun := l.held.len(), "messages"
		if n == 1 {
			noun = "message"
		}
		return fmt.Errorf("engine stopped with %d %s DLNG that the store could not take back (it stayed unreachable): "+
			"their recovery counts a crash for each at the next start of this node, or on a node that reached the store "+
			"while this one could not; a node that could not reach it either hands them back without counting", n, noun)
	}
	return nil
}

// cancelGrace is how long a cancelled delivery has to return.
const cancelGrace = 2 * time.Second

// abandon ends the loop of an incarnation that is over: another node owns
// its queues now and recovers what it had DLNG, so it records nothing.
func (l *loop) abandon(cancel context.CancelCauseFunc, err error) error {
	l.e.log.Error("this node's leases were taken over; it stops delivering", "node", l.node.ID, "err", err)
	cancel(err)
	return err
}

func handBack(c store.Claimed) store.Outcome {
	return store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeHandBack}
}

func resetTimer(t *time.Timer, d time.Duration) {
	if d < 0 {
		d = time.Hour
	}
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}
