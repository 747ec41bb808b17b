package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// deliverHead delivers the head of one queue and returns the queues that
// should be looked at again. The inbound stage calls no receiver, so an
// inbound message is marked DLNG, routed and marked DLVD in one commit.
func (e *Engine) deliverHead(ctx context.Context, queue string) []string {
	var routed *routing
	m, payload, err := e.markDelivering(queue, func(w store.Writer, m *domain.Message, payload []byte) error {
		if m.Stage != domain.Inbound {
			return nil
		}
		var err error
		routed, err = e.routeTx(w, m, payload)
		return err
	})
	if err != nil {
		e.log.Error("starting a delivery failed", "queue", queue, "err", err)
		return nil
	}
	if m == nil {
		return nil // the head changed meanwhile (an operator acted, the queue stopped)
	}
	if m.Stage == domain.Inbound {
		return e.routed(ctx, m, routed)
	}
	rcv, ok := e.receivers[m.Receiver]
	if !ok {
		return e.settle(ctx, m, receiver.Permanent("receiver %s is not configured", m.Receiver))
	}
	err = rcv.Deliver(ctx, receiver.Delivery{Message: m, Payload: payload, Attempt: m.Attempts})
	return e.settle(ctx, m, err)
}

// markDelivering makes the queue's head DLNG — durably, before any receiver
// is called (§4) — and returns it with its payload. then, if set, runs in
// the same transaction with the message as marked.
func (e *Engine) markDelivering(queue string, then func(w store.Writer, m *domain.Message, payload []byte) error) (*domain.Message, []byte, error) {
	var m *domain.Message
	var payload []byte
	err := e.st.Update(context.Background(), func(w store.Writer) error {
		m, payload = nil, nil
		rec, err := w.Queue(queue)
		if err != nil || rec.Stopped {
			return err
		}
		head, err := w.Head(queue)
		if err != nil || head == nil {
			return err
		}
		now := e.now()
		switch head.Status {
		case domain.StatusTBDL:
		case domain.StatusWAIT:
			if head.NextAttemptAt != nil && head.NextAttemptAt.After(now) {
				return nil
			}
		default:
			return nil
		}
		attempt := head.Attempts + 1
		m, err = w.Transition(store.TransitionParams{
			ID: head.ID, From: []domain.Status{head.Status}, To: domain.StatusDLNG,
			Update: func(m *domain.Message) {
				m.Attempts = attempt
				m.Node = e.node
				m.NextAttemptAt = nil
			},
			History: e.history(now, fmt.Sprintf("delivery attempt %d", attempt)),
		})
		if err != nil {
			return err
		}
		if payload, err = w.Payload(head.ID); err != nil || then == nil {
			return err
		}
		return then(w, m, payload)
	})
	return m, payload, err
}

// routing is what the inbound stage did to one message.
type routing struct {
	done    *domain.Message   // the inbound message, DLVD
	created []*domain.Message // its outbound messages
}

// routeTx does the inbound stage within the caller's transaction: one
// outbound message per receiver, and the inbound message DLVD. With no
// receiver it changes nothing and returns nil.
func (e *Engine) routeTx(w store.Writer, m *domain.Message, payload []byte) (*routing, error) {
	receivers := m.Receivers
	how := "named at send time"
	if len(receivers) == 0 {
		receivers, how = e.routeFor(m), "by routing rules"
	}
	if len(receivers) == 0 {
		return nil, nil
	}
	r := &routing{}
	now := e.now()
	for _, rc := range receivers {
		queue, err := e.placer.Outbound(w, m.QoS, rc, m.AppQueue)
		if err != nil {
			return nil, err
		}
		status, err := store.ArrivalStatus(w, queue, m.QoS)
		if err != nil {
			return nil, err
		}
		out := &domain.Message{
			ID: domain.NewID(), QoS: m.QoS, Sender: m.Sender, Receiver: rc, Interface: m.Interface,
			AppQueue: m.AppQueue, Queue: queue, Stage: domain.Outbound, Status: status,
			ParentID: m.ID, Headers: m.Headers, CreatedAt: now, UpdatedAt: now,
		}
		if err := w.Insert(out, payload, e.history(now, "created by receiver determination from "+m.ID)); err != nil {
			return nil, err
		}
		r.created = append(r.created, out)
	}
	var err error
	r.done, err = e.complete(w, m, now, fmt.Sprintf("receiver determination (%s): %s", how, strings.Join(receivers, ", ")))
	return r, err
}

// routed reports the inbound stage's outcome; a message with no receiver
// goes NDLV.
func (e *Engine) routed(ctx context.Context, m *domain.Message, r *routing) []string {
	if r == nil {
		err := receiver.Permanent("no receiver: no route matches sender %s interface %q, and none was named at send time",
			m.Sender, m.Interface)
		return e.settle(ctx, m, err)
	}
	e.emit(EventRouted, r.done)
	wake := make([]string, 0, len(r.created)+1)
	for _, c := range r.created {
		wake = append(wake, c.Queue)
	}
	return wake
}

// routeFor applies the routing rules of §8: every rule whose sender matches
// and whose interface is empty or matches adds its receivers, once each.
func (e *Engine) routeFor(m *domain.Message) []string {
	var out []string
	seen := map[string]bool{}
	for _, rt := range e.cfg.Routes {
		if rt.Sender != m.Sender || (rt.Interface != "" && rt.Interface != m.Interface) {
			continue
		}
		for _, r := range rt.Receivers {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// settle records the outcome of a delivery: DLVD, WAIT for a retry, or NDLV.
// A delivery cancelled by shutdown is handed back to TBDL instead.
func (e *Engine) settle(ctx context.Context, m *domain.Message, derr error) []string {
	if derr != nil && e.stopping.Load() && ctx.Err() != nil {
		return e.handBack(m)
	}
	var after *domain.Message
	var kind EventKind
	err := e.st.Update(context.Background(), func(w store.Writer) error {
		now := e.now()
		var err error
		switch {
		case derr == nil:
			kind = EventDelivered
			after, err = e.complete(w, m, now, "delivered to "+m.Receiver)
		case receiver.ClassOf(derr) == domain.ErrorTransient && m.Attempts <= e.cfg.Engine.Retry.Count:
			kind = EventWaiting
			after, err = e.fail(w, m, domain.StatusWAIT, domain.ErrorTransient, derr.Error(), now, e.retryAt(m.Attempts, now))
		default:
			kind = EventFailed
			class := receiver.ClassOf(derr)
			msg := derr.Error()
			if class == domain.ErrorTransient {
				msg = fmt.Sprintf("%s (no attempts left after %d)", msg, m.Attempts)
			}
			after, err = e.fail(w, m, domain.StatusNDLV, class, msg, now, nil)
		}
		return err
	})
	if err != nil {
		return e.storeFailed(m, err)
	}
	// Both times are the engine clock's: DLNG and the outcome.
	e.emitEvent(Event{Kind: kind, Message: after, Duration: after.UpdatedAt.Sub(m.UpdatedAt)})
	switch {
	case kind == EventFailed && domain.Blocks(after.QoS, after.Status, after.ErrorClass):
		e.log.Warn("queue blocked", "queue", after.Queue, "message", after.ID, "error", after.Error)
	case kind == EventFailed:
		e.log.Warn("message not delivered; the queue goes on", "queue", after.Queue, "message", after.ID, "error", after.Error)
	}
	return nil
}

// complete makes a DLNG message DLVD and lets messages held behind it go on.
func (e *Engine) complete(w store.Writer, m *domain.Message, now time.Time, reason string) (*domain.Message, error) {
	after, err := w.Transition(store.TransitionParams{
		ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusDLVD,
		Update: func(m *domain.Message) {
			m.Error, m.ErrorClass, m.Node = "", "", ""
		},
		History: e.history(now, reason),
	})
	if err != nil {
		return nil, err
	}
	return after, store.RestoreHold(w, after.Queue, e.history(now, "the head "+m.ID+" was delivered"))
}

// fail makes a DLNG message WAIT or NDLV and holds the rest of an EOIO queue.
func (e *Engine) fail(w store.Writer, m *domain.Message, to domain.Status, class domain.ErrorClass, msg string, now time.Time, next *time.Time) (*domain.Message, error) {
	after, err := w.Transition(store.TransitionParams{
		ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: to,
		Update: func(m *domain.Message) {
			m.Error, m.ErrorClass, m.NextAttemptAt, m.Node = msg, class, next, ""
		},
		History: e.history(now, fmt.Sprintf("%s error: %s", class, msg)),
	})
	if err != nil {
		return nil, err
	}
	return after, store.RestoreHold(w, after.Queue, e.history(now, "held behind "+after.ID+" ("+string(to)+")"))
}

// retryAt is when attempt n+1 is due: engine.retry.interval after a failed
// attempt n, doubled per attempt up to max_interval with backoff exponential.
func (e *Engine) retryAt(attempts int, now time.Time) *time.Time {
	r := e.cfg.Engine.Retry
	wait := r.Interval
	if r.Backoff == "exponential" {
		for i := 1; i < attempts && (r.MaxInterval <= 0 || wait < r.MaxInterval); i++ {
			wait *= 2
		}
		if r.MaxInterval > 0 && wait > r.MaxInterval {
			wait = r.MaxInterval
		}
	}
	t := now.Add(wait)
	return &t
}

// handBack returns a delivery that shutdown cancelled to TBDL; the attempt
// does not count and neither does a crash.
func (e *Engine) handBack(m *domain.Message) []string {
	var after *domain.Message
	err := e.st.Update(context.Background(), func(w store.Writer) error {
		var err error
		after, err = w.Transition(store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusTBDL,
			Update: func(m *domain.Message) {
				m.Attempts = max(0, m.Attempts-1)
				m.Node = ""
			},
			History: e.history(e.now(), "handed back at shutdown"),
		})
		return err
	})
	if err != nil {
		return e.storeFailed(m, err)
	}
	e.emit(EventHandedBack, after)
	return nil
}

// storeFailed logs a failure to record an outcome. The message stays DLNG
// and the next start's crash recovery takes care of it.
func (e *Engine) storeFailed(m *domain.Message, err error) []string {
	if errors.Is(err, domain.ErrConflict) {
		e.log.Warn("message changed during delivery", "message", m.ID, "err", err)
		return nil
	}
	e.log.Error("recording a delivery failed; the message stays DLNG until recovery", "message", m.ID, "err", err)
	return nil
}

func (e *Engine) history(at time.Time, reason string) domain.HistoryEntry {
	return domain.HistoryEntry{At: at, Node: e.node, Actor: "engine", Reason: reason}
}
