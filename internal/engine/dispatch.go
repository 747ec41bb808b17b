package engine

import (
	"context"
	"errors"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// job is a queue whose head is ready for delivery.
type job struct {
	queue string
	// candidate marks a head that was DLNG when a node died: it is
	// delivered alone (§4), so a second crash can only be its fault.
	candidate bool
}

// done reports a finished delivery to the dispatcher.
type done struct {
	queue string
	// wake names queues that got new messages (outbound messages created
	// by routing) or may move on (an EO head that went NDLV permanently).
	wake []string
}

// dispatcher is the state of the one goroutine that decides what runs.
// Queues are served round robin: a queue delivers one message, then goes to
// the back of the line, so no queue starves another.
type dispatcher struct {
	busy      map[string]bool // queues with a delivery in flight
	queued    map[string]bool // queues in runnable
	runnable  []job
	waiting   map[string]time.Time // queues whose WAIT head is due later
	inflight  int
	isolating bool // a blacklist candidate is being delivered alone
}

func (e *Engine) dispatch(ctx context.Context) error {
	d := &dispatcher{busy: map[string]bool{}, queued: map[string]bool{}, waiting: map[string]time.Time{}}
	finished := make(chan done)
	// Deliveries run on their own context: a shutdown lets them finish
	// within engine.shutdown_timeout, then cancels them.
	dctx, cancelDeliveries := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelDeliveries()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	for {
		pending, all := e.takePending()
		next := time.Duration(-1)
		if err := e.examine(d, pending, all); err != nil {
			// The store failed (a full disk, say): look at everything
			// again in a second rather than spin.
			e.log.Error("reading queues failed; retrying in 1s", "err", err)
			e.mu.Lock()
			e.scanAll = true
			e.mu.Unlock()
			next = time.Second
		}
		e.start(dctx, d, finished)
		if d.inflight == 0 && len(d.runnable) == 0 {
			e.emit(EventIdle, nil)
		}
		if due := d.nextDue(e.now()); next < 0 || (due >= 0 && due < next) {
			next = due
		}
		resetTimer(timer, next)

		select {
		case <-ctx.Done():
			return e.shutdown(d, finished, cancelDeliveries)
		case <-e.signal:
		case f := <-finished:
			e.finish(d, f)
		case <-timer.C:
			now := e.now()
			for q, due := range d.waiting {
				if !due.After(now) {
					delete(d.waiting, q)
					e.Notify(q)
				}
			}
		}
	}
}

func (e *Engine) finish(d *dispatcher, f done) {
	delete(d.busy, f.queue)
	d.inflight--
	if d.isolating && d.inflight == 0 {
		d.isolating = false
	}
	e.Notify(append(f.wake, f.queue)...)
}

// examine looks at the heads of the given queues (or of all) and queues up
// those that are ready.
func (e *Engine) examine(d *dispatcher, pending map[string]bool, all bool) error {
	if !all && len(pending) == 0 {
		return nil
	}
	now := e.now()
	return e.st.View(context.Background(), func(r store.Reader) error {
		check := func(rec *store.QueueRecord) error {
			if d.busy[rec.Name] || d.queued[rec.Name] {
				return nil
			}
			delete(d.waiting, rec.Name)
			j, due, err := e.readiness(r, rec, now)
			if err != nil || j == nil {
				if !due.IsZero() {
					d.waiting[rec.Name] = due
				}
				return err
			}
			d.queued[rec.Name] = true
			if j.candidate {
				d.runnable = append([]job{*j}, d.runnable...)
			} else {
				d.runnable = append(d.runnable, *j)
			}
			return nil
		}
		if all {
			return r.Queues("", check)
		}
		for name := range pending {
			rec, err := r.Queue(name)
			if errors.Is(err, domain.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := check(rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// readiness says whether a queue's head can be delivered now, or when.
func (e *Engine) readiness(r store.Reader, rec *store.QueueRecord, now time.Time) (*job, time.Time, error) {
	if rec.Stopped {
		return nil, time.Time{}, nil
	}
	head, err := r.Head(rec.Name)
	if err != nil || head == nil {
		return nil, time.Time{}, err
	}
	// A blacklist candidate stays one until it is delivered: its retries
	// after a transient error run alone too, or a crash during one would
	// be blamed on the innocent messages in flight beside it.
	candidate := head.Crashes > 0 && e.cfg.Engine.Blacklisting.Enabled
	switch head.Status {
	case domain.StatusTBDL:
		return &job{queue: rec.Name, candidate: candidate}, time.Time{}, nil
	case domain.StatusWAIT:
		if head.NextAttemptAt != nil && head.NextAttemptAt.After(now) {
			return nil, *head.NextAttemptAt, nil
		}
		return &job{queue: rec.Name, candidate: candidate}, time.Time{}, nil
	}
	return nil, time.Time{}, nil
}

// start begins deliveries while workers are free. A blacklist candidate
// waits until nothing is in flight, and nothing starts while it runs.
func (e *Engine) start(ctx context.Context, d *dispatcher, finished chan<- done) {
	workers := max(1, e.cfg.Engine.Workers)
	for len(d.runnable) > 0 && d.inflight < workers && !d.isolating {
		j := d.runnable[0]
		if j.candidate {
			if d.inflight > 0 {
				return
			}
			d.isolating = true
		}
		d.runnable = d.runnable[1:]
		delete(d.queued, j.queue)
		d.busy[j.queue] = true
		d.inflight++
		go func() {
			wake := e.deliverHead(ctx, j.queue)
			finished <- done{queue: j.queue, wake: wake}
		}()
	}
}

func (d *dispatcher) nextDue(now time.Time) time.Duration {
	next := time.Duration(-1)
	for _, due := range d.waiting {
		if w := max(due.Sub(now), 0); next < 0 || w < next {
			next = w
		}
	}
	return next
}

func resetTimer(t *time.Timer, d time.Duration) {
	if d < 0 {
		d = time.Hour
	}
	t.Reset(d)
}

// shutdown waits for the deliveries in flight, up to
// engine.shutdown_timeout, then cancels the rest; they hand their messages
// back to TBDL.
func (e *Engine) shutdown(d *dispatcher, finished chan done, cancel context.CancelFunc) error {
	e.stopping.Store(true)
	if d.inflight > 0 {
		e.log.Info("engine stopping: waiting for deliveries in flight", "in_flight", d.inflight,
			"timeout", e.cfg.Engine.ShutdownTimeout.String())
	}
	deadline := time.NewTimer(e.cfg.Engine.ShutdownTimeout)
	defer deadline.Stop()
	for d.inflight > 0 {
		select {
		case <-finished:
			d.inflight--
		case <-deadline.C:
			cancel()
		}
	}
	return nil
}
