package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// errNotConfigured is why a message whose receiver the node has not
// configured is handed back: its claims leave such messages alone (§8), so
// only a claim made under another configuration can hold one.
var errNotConfigured = errors.New("handed back: its receiver is not configured on this node")

// deliver hands one claimed outbound message to its receiver.
func (e *Engine) deliver(ctx context.Context, c store.Claimed) error {
	m := c.Message
	rcv, ok := e.receivers[m.Receiver]
	if !ok {
		return fmt.Errorf("receiver %s: %w", m.Receiver, errNotConfigured)
	}
	return rcv.Deliver(ctx, receiver.Delivery{Message: m, Payload: c.Payload, Attempt: m.Attempts})
}

// outcomeOf turns a delivery's result into the outcome to record (§4): DLVD,
// WAIT for a retry while attempts are left, or NDLV. A delivery whose
// context was cancelled — by a shutdown, or because the lease went stale
// (cancelled says which) — is handed back instead, unless it ended well.
func (e *Engine) outcomeOf(c store.Claimed, err error, cancelled error) store.Outcome {
	m := c.Message
	o := store.Outcome{ID: m.ID, Epoch: c.Epoch}
	switch class := receiver.ClassOf(err); {
	case err == nil:
		o.Kind, o.Reason = store.OutcomeDelivered, "delivered to "+m.Receiver
	case cancelled != nil:
		o.Kind, o.Reason = store.OutcomeHandBack, cancelled.Error()
	case errors.Is(err, errNotConfigured):
		// A configuration problem, not the message's fault: no attempt
		// counts, and it waits for a node that has the receiver.
		o.Kind, o.Reason = store.OutcomeHandBack, errNotConfigured.Error()
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

// report tells the observer and the log what one recorded outcome did.
func (e *Engine) report(o store.Outcome, after *domain.Message, took time.Duration) {
	ev := Event{Message: after, Duration: took}
	switch o.Kind {
	case store.OutcomeDelivered:
		ev.Kind = EventDelivered
	case store.OutcomeRetry:
		ev.Kind = EventWaiting
	case store.OutcomeHandBack:
		ev.Kind, ev.Duration = EventHandedBack, 0
	case store.OutcomeFailed:
		ev.Kind = EventFailed
		e.logFailed(after)
	}
	e.emit(ev)
}

// reportRouted tells the observer and the log what a claim's routing did.
func (e *Engine) reportRouted(res *store.ClaimResult) {
	for _, m := range res.Routed {
		if m.Status == domain.StatusNDLV {
			e.logFailed(m)
			e.emit(Event{Kind: EventFailed, Message: m})
			continue
		}
		if m.Stage == domain.Outbound {
			e.noteReceiver(m)
		}
		e.emit(Event{Kind: EventRouted, Message: m})
	}
	for _, m := range res.Created {
		e.noteReceiver(m)
	}
}

// noteReceiver logs, once per receiver, that routing sent a message to a
// receiver this node has not configured: it waits TBDL (§8).
func (e *Engine) noteReceiver(m *domain.Message) {
	if _, ok := e.receivers[m.Receiver]; ok {
		return
	}
	e.unconfiguredMu.Lock()
	first := !e.unconfigured[m.Receiver]
	e.unconfigured[m.Receiver] = true
	e.unconfiguredMu.Unlock()
	if first {
		e.log.Warn("receiver not configured on this node: its messages wait TBDL for a node that has it",
			"receiver", m.Receiver, "queue", m.Queue)
	}
}

func (e *Engine) logFailed(m *domain.Message) {
	if domain.Blocks(m.QoS, m.Status, m.ErrorClass) {
		e.log.Warn("queue blocked", "queue", m.Queue, "message", m.ID, "error", m.Error)
	} else {
		e.log.Warn("message not delivered; the queue goes on", "queue", m.Queue, "message", m.ID, "error", m.Error)
	}
}
