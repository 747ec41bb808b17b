package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// deliver hands one claimed outbound message to its receiver.
func (e *Engine) deliver(ctx context.Context, c store.Claimed) error {
	m := c.Message
	rcv, ok := e.receivers[m.Receiver]
	if !ok {
		return receiver.Permanent("receiver %s is not configured", m.Receiver)
	}
	return rcv.Deliver(ctx, receiver.Delivery{Message: m, Payload: c.Payload, Attempt: m.Attempts})
}

// outcomeOf turns a delivery's result into the outcome to record (§4): DLVD,
// WAIT for a retry while attempts are left, or NDLV. A delivery that a
// shutdown cancelled is handed back instead.
func (e *Engine) outcomeOf(c store.Claimed, err error, stopping bool) store.Outcome {
	m := c.Message
	o := store.Outcome{ID: m.ID, Epoch: c.Epoch}
	switch class := receiver.ClassOf(err); {
	case err == nil:
		o.Kind, o.Reason = store.OutcomeDelivered, "delivered to "+m.Receiver
	case stopping && class == domain.ErrorTransient:
		o.Kind = store.OutcomeHandBack
	case class == domain.ErrorTransient && m.Attempts <= e.cfg.Retry.Count:
		o.Kind, o.Error, o.Class = store.OutcomeRetry, err.Error(), class
		o.RetryIn = e.cfg.Retry.retryIn(m.Attempts)
	default:
		o.Kind, o.Error, o.Class = store.OutcomeFailed, err.Error(), class
		if class == domain.ErrorTransient {
			o.Error = fmt.Sprintf("%s (no attempts left after %d)", o.Error, m.Attempts)
		}
	}
	return o
}

// route does the inbound stage of §3 for one claimed inbound message: the
// receivers named at send time, else those of the routing rules, each
// placed in its outbound queue with the tuning values of the claim. A
// message with no receiver goes NDLV.
func (e *Engine) route(c store.Claimed, params paramSet) store.Outcome {
	m := c.Message
	o := store.Outcome{ID: m.ID, Epoch: c.Epoch}
	receivers, how := m.Receivers, "named at send time"
	if len(receivers) == 0 {
		receivers, how = e.routeFor(m), "by routing rules"
	}
	if len(receivers) == 0 {
		o.Kind, o.Class = store.OutcomeFailed, domain.ErrorPermanent
		o.Error = fmt.Sprintf("no receiver: no route matches sender %s interface %q, and none was named at send time",
			m.Sender, m.Interface)
		return o
	}
	o.Kind = store.OutcomeRouted
	for _, r := range receivers {
		queue, err := e.placer.Outbound(params, m.QoS, r, m.AppQueue)
		if err != nil {
			o.Kind, o.Class, o.Error, o.Routes = store.OutcomeFailed, domain.ErrorPermanent, "receiver determination: "+err.Error(), nil
			return o
		}
		o.Routes = append(o.Routes, store.Route{Receiver: r, Queue: queue})
	}
	o.Reason = fmt.Sprintf("receiver determination (%s): %s", how, strings.Join(receivers, ", "))
	return o
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

// report tells the observer and the log what one recorded outcome did.
func (e *Engine) report(o store.Outcome, after *domain.Message, took time.Duration) {
	ev := Event{Message: after, Duration: took}
	switch o.Kind {
	case store.OutcomeRouted:
		ev.Kind, ev.Duration = EventRouted, 0
	case store.OutcomeDelivered:
		ev.Kind = EventDelivered
	case store.OutcomeRetry:
		ev.Kind = EventWaiting
	case store.OutcomeHandBack:
		ev.Kind, ev.Duration = EventHandedBack, 0
	case store.OutcomeFailed:
		ev.Kind = EventFailed
		if domain.Blocks(after.QoS, after.Status, after.ErrorClass) {
			e.log.Warn("queue blocked", "queue", after.Queue, "message", after.ID, "error", after.Error)
		} else {
			e.log.Warn("message not delivered; the queue goes on", "queue", after.Queue, "message", after.ID, "error", after.Error)
		}
	}
	e.emit(ev)
}

// paramSet is a snapshot of tuning values, as a claim returned them.
type paramSet map[[2]string]int

func paramSetOf(ps []domain.Param) paramSet {
	s := make(paramSet, len(ps))
	for _, p := range ps {
		s[[2]string{p.Name, p.Sub}] = p.Value
	}
	return s
}

// Param returns one tuning value of the snapshot.
func (s paramSet) Param(name, sub string) (int, bool, error) {
	v, ok := s[[2]string{name, sub}]
	return v, ok, nil
}
