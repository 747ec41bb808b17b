package engine_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
)

// The tests in this file walk the rows of §4's table of error classes.

func TestTransientWithAttemptsLeftWaitsThenDelivers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	ep.respond(func(_ *http.Request, _ arrival, nth int) int {
		if nth == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	in := b.send(t, eo("WMS", "order 1"))[0]
	b.start(t)
	b.waitDelivered(t, 1)

	waits := b.eventsOf(engine.EventWaiting)
	require.Len(t, waits, 1)
	w := waits[0].Message
	require.Equal(t, domain.StatusWAIT, w.Status)
	require.Equal(t, 1, w.Attempts)
	require.Equal(t, domain.ErrorTransient, w.ErrorClass)
	require.Contains(t, w.Error, "503 Service Unavailable")
	require.NotNil(t, w.NextAttemptAt)
	require.Equal(t, w.UpdatedAt.Add(10*time.Millisecond), *w.NextAttemptAt, "due engine.retry.interval after the failure")
	require.Empty(t, w.Node)

	m := b.message(t, w.ID)
	require.Equal(t, in.ID, m.ID, "one message, one id: the one sent is the one delivered")
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 2, m.Attempts)
	require.Empty(t, m.Error, "a delivery clears the last error")
	require.Empty(t, m.ErrorClass)
	require.Nil(t, m.NextAttemptAt)
	require.Equal(t, []string{">TBDL", "TBDL>TBDL", "TBDL>DLNG", "DLNG>WAIT", "WAIT>DLNG", "DLNG>DLVD"}, transitions(m.History),
		"sent, moved on to its receiver's queue, then delivered")
	require.Equal(t, "delivery attempt 2", m.History[4].Reason)
	require.Equal(t, "test-node", m.History[4].Node)
	require.Equal(t, "engine", m.History[4].Actor)
	require.Equal(t, []string{"order 1"}, ep.accepted())
	require.Len(t, ep.all(), 2)
}

func TestTransientOnEOIOHoldsSuccessorsUntilTheRetryDelivers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The engine's clock stands still, so the WAIT head is not due until
	// the test moves the clock.
	clk := newClock()
	b.now = clk.Now
	ep := b.newEndpoint(t, "WMS")
	ep.respond(func(_ *http.Request, a arrival, nth int) int {
		if a.Payload == "1" && nth == 0 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	})
	in := b.send(t, eoio("WMS", "ORDERS", "1"), eoio("WMS", "ORDERS", "2"), eoio("WMS", "ORDERS", "3"))
	b.start(t)

	b.waitSettled(t, "the head WAIT and its successors HOLD", func() bool {
		return b.count(engine.EventRouted) == 3 && b.count(engine.EventWaiting) == 1 && slices.Equal(b.statusOf(t, in...), []domain.Status{domain.StatusWAIT, domain.StatusHOLD, domain.StatusHOLD})
	})
	require.Equal(t, domain.QueueWaiting, b.queueState(t, "XBQO"+code4("WMS")+"ORDERS"))
	require.Len(t, ep.all(), 1, "nothing overtakes the waiting head")

	clk.Advance(10 * time.Millisecond)
	b.eng.Notify()
	b.waitDelivered(t, 3)
	require.Equal(t, []string{"1", "2", "3"}, ep.accepted())
	for _, m := range in[1:] {
		out := b.message(t, b.outboundOf(t, m.ID).ID)
		// Created HOLD, or held when the head failed: released either way.
		require.Contains(t, transitions(out.History), "HOLD>TBDL")
	}
}

func TestTransientExhaustedBlocksTheQueue(t *testing.T) {
	t.Parallel()

	for _, qos := range []domain.QoS{domain.EO, domain.EOIO} {
		t.Run(string(qos), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			// EO queues serial (eo_window 1, as in SAP): a later message
			// never starts beside the failing head. With a window, those in
			// flight finish (TestEOWindowStartsNothingWhileBlocked).
			b.cfg.Engine.EOWindow = 1
			ep := b.newEndpoint(t, "WMS")
			ep.failPayload("1", http.StatusInternalServerError)
			req := func(p string) domain.SendRequest {
				if qos == domain.EO {
					return eo("WMS", p)
				}
				return eoio("WMS", "ORDERS", p)
			}
			in := b.send(t, req("1"), req("2"), req("3"))
			b.start(t)

			later := domain.StatusTBDL // EO: later messages stay TBDL behind the blocked head
			if qos == domain.EOIO {
				later = domain.StatusHOLD
			}
			b.waitSettled(t, "the head NDLV", func() bool {
				return b.count(engine.EventRouted) == 3 && b.count(engine.EventFailed) == 1 && slices.Equal(b.statusOf(t, in...), []domain.Status{domain.StatusNDLV, later, later})
			})

			head := b.message(t, b.outboundOf(t, in[0].ID).ID)
			require.Equal(t, 4, head.Attempts, "engine.retry.count 3: one attempt and three retries")
			require.Equal(t, domain.ErrorTransient, head.ErrorClass)
			require.Contains(t, head.Error, "500 Internal Server Error")
			require.Contains(t, head.Error, "(no attempts left after 4)")
			require.Nil(t, head.NextAttemptAt)
			require.False(t, head.Blacklisted)
			require.Equal(t, repeat("1", 4), payloads(ep.all()), "later messages are not delivered")
			require.Equal(t, domain.QueueBlocked, b.queueState(t, head.Queue))
			require.Len(t, b.eventsOf(engine.EventWaiting), 3)
			require.Len(t, b.eventsOf(engine.EventFailed), 1)

			// A message sent to the blocked queue now is not delivered either.
			more := b.send(t, req("4"))
			b.waitSettled(t, "the new message routed", func() bool {
				return b.count(engine.EventRouted) == 4
			})
			require.Equal(t, []domain.Status{later}, b.statusOf(t, more...))
			require.Len(t, ep.all(), 4)
		})
	}
}

func TestPermanentOnEOLetsTheQueueGoOn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	ep.failPayload("1", http.StatusUnprocessableEntity)
	in := b.send(t, eo("WMS", "1"), eo("WMS", "2"), eo("WMS", "3"))
	b.start(t)
	b.waitSettled(t, "two delivered, one NDLV", func() bool {
		return b.count(engine.EventDelivered) == 2 && b.count(engine.EventFailed) == 1
	})

	require.Equal(t, []domain.Status{domain.StatusNDLV, domain.StatusDLVD, domain.StatusDLVD}, b.statusOf(t, in...))
	head := b.message(t, b.outboundOf(t, in[0].ID).ID)
	require.Equal(t, 1, head.Attempts, "a permanent error is not retried")
	require.Equal(t, domain.ErrorPermanent, head.ErrorClass)
	require.Contains(t, head.Error, "422 Unprocessable Entity")
	require.ElementsMatch(t, []string{"2", "3"}, ep.accepted(), "EO: in any order")
	require.NotEqual(t, domain.QueueBlocked, b.queueState(t, head.Queue))
	require.Empty(t, b.eventsOf(engine.EventWaiting))
}

func TestPermanentOnEOIOHoldsTheQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	ep.failPayload("1", http.StatusBadRequest)
	in := b.send(t, eoio("WMS", "ORDERS", "1"), eoio("WMS", "ORDERS", "2"), eoio("WMS", "ORDERS", "3"))
	// Another app queue is not affected.
	other := b.send(t, eoio("WMS", "INVOICES", "x"))
	b.start(t)

	b.waitSettled(t, "the head NDLV and the other app queue delivered", func() bool {
		return b.count(engine.EventRouted) == 4 && b.count(engine.EventFailed) == 1 && b.count(engine.EventDelivered) == 1
	})
	require.Equal(t, []domain.Status{domain.StatusNDLV, domain.StatusHOLD, domain.StatusHOLD}, b.statusOf(t, in...))
	head := b.message(t, b.outboundOf(t, in[0].ID).ID)
	require.Equal(t, domain.ErrorPermanent, head.ErrorClass)
	require.Equal(t, 1, head.Attempts)
	require.Equal(t, domain.QueueBlocked, b.queueState(t, head.Queue))
	require.Equal(t, []domain.Status{domain.StatusDLVD}, b.statusOf(t, other...))

	// Messages that arrive later join the HOLD, and stay there.
	more := b.send(t, eoio("WMS", "ORDERS", "4"), eoio("WMS", "ORDERS", "5"))
	b.waitSettled(t, "the new messages routed", func() bool {
		return b.count(engine.EventRouted) == 6
	})
	require.Equal(t, []domain.Status{domain.StatusHOLD, domain.StatusHOLD}, b.statusOf(t, more...))
	for _, m := range append(in[1:], more...) {
		require.Equal(t, domain.StatusHOLD, b.outboundOf(t, m.ID).Status)
	}
	require.ElementsMatch(t, []string{"1", "x"}, payloads(ep.all()))
}

func TestNoReceiverFailsTheInboundMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newEndpoint(t, "WMS")
	noRoute := domain.SendRequest{QoS: domain.EO, Sender: "CRM", Interface: "Lead", Payload: []byte("?")}
	in := b.send(t, noRoute, eo("WMS", "2"))
	b.start(t)
	b.waitDelivered(t, 1)

	m := b.message(t, in[0].ID)
	require.Equal(t, domain.StatusNDLV, m.Status)
	require.Equal(t, domain.ErrorPermanent, m.ErrorClass)
	require.Equal(t, `no receiver: no route matches sender CRM interface "Lead", and none was named at send time`, m.Error)
	require.Empty(t, b.outbound(t, in[0].ID))
	require.Equal(t, domain.StatusDLVD, b.message(t, in[1].ID).Status, "an EO inbound queue goes on")
	failed := b.eventsOf(engine.EventFailed)
	require.Len(t, failed, 1)
	require.Equal(t, in[0].ID, failed[0].Message.ID)
}

func TestNoReceiverOnEOIOHoldsTheInboundQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	noRoute := domain.SendRequest{QoS: domain.EOIO, Sender: "CRM", AppQueue: "LEADS", Payload: []byte("?")}
	in := b.send(t, noRoute, eoio("WMS", "LEADS", "2"))
	b.start(t)
	b.waitSettled(t, "the inbound head NDLV", func() bool {
		return b.count(engine.EventFailed) == 1
	})
	require.Equal(t, domain.StatusNDLV, b.message(t, in[0].ID).Status)
	require.Equal(t, domain.StatusHOLD, b.message(t, in[1].ID).Status)
	require.Equal(t, domain.QueueBlocked, b.queueState(t, "XBQILEADS"))
	require.Empty(t, ep.all())
}

func payloads(as []arrival) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Payload
	}
	return out
}

func TestExponentialBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.Retry = config.Retry{Count: 3, Interval: 10 * time.Millisecond, Backoff: "exponential",
		MaxInterval: 25 * time.Millisecond}
	ep := b.newEndpoint(t, "WMS")
	ep.failPayload("1", http.StatusBadGateway)
	b.send(t, eo("WMS", "1"))
	b.start(t)
	b.waitFor(t, "the retries to run out", func() bool { return b.count(engine.EventFailed) == 1 })

	var waits []time.Duration
	for _, e := range b.eventsOf(engine.EventWaiting) {
		waits = append(waits, e.Message.NextAttemptAt.Sub(e.Message.UpdatedAt))
	}
	require.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}, waits,
		"doubled per attempt, up to max_interval")
}
