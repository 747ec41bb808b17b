package engine_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
)

// switchTo switches EOIO to n queues per stage through the admin service.
func (b *testBundle) switchTo(t *testing.T, n int) *admin.EOIOStatus {
	t.Helper()
	st, err := b.admin.EOIOSwitch(b.ctx, admin.EOIOSwitchParams{Queues: fmt.Sprint(n)})
	require.NoError(t, err)
	return st
}

// ofAppQueue keeps the payloads that start with an app queue's name.
func ofAppQueue(payloads []string, appQueue string) []string {
	var out []string
	for _, p := range payloads {
		if strings.HasPrefix(p, appQueue+"-") {
			out = append(out, p)
		}
	}
	return out
}

// A transient error in a shared queue (§10): the message WAITs in its app
// queue's error queue with its app queue's later messages HOLD behind it,
// the shared queue delivers the other app queue meanwhile, a message of the
// app queue sent meanwhile joins the error queue, and once the retry is
// delivered the app queue goes on in order.
func TestEOIOErrorInASharedQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clk := newClock()
	b.now = clk.Now
	ep := b.newEndpoint(t, "WMS")
	ep.respond(func(_ *http.Request, a arrival, nth int) int {
		if a.Payload == "A-1" && nth == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	b.switchTo(t, 4) // A and C share a queue of 4 (CRC-32 modulo 4 is 3 for both)
	a := b.send(t, eoio("WMS", "A", "A-1"), eoio("WMS", "C", "C-1"), eoio("WMS", "A", "A-2"), eoio("WMS", "C", "C-2"),
		eoio("WMS", "A", "A-3"))
	b.start(t)

	b.waitSettled(t, "A-1 WAIT in the error queue, C delivered", func() bool {
		return b.count(engine.EventWaiting) == 1 && b.count(engine.EventDelivered) == 2
	})
	require.Equal(t, []string{"C-1", "C-2"}, ep.accepted(), "the shared queue went on")
	errorQueue := "XBQF" + code4("WMS") + "A"
	var as []*domain.Message
	for _, m := range []*domain.Message{a[0], a[2], a[4]} {
		out := b.outboundOf(t, m.ID)
		require.Equal(t, errorQueue, out.Queue)
		as = append(as, out)
	}
	require.Equal(t, []domain.Status{domain.StatusWAIT, domain.StatusHOLD, domain.StatusHOLD},
		[]domain.Status{as[0].Status, as[1].Status, as[2].Status})
	require.Equal(t, domain.QueueWaiting, b.queueState(t, errorQueue))
	require.Equal(t, domain.QueueEmpty, b.queueState(t, "XB2O"+code4("WMS")+"EOIO03"))
	require.Equal(t, errorQueue, b.eventsOf(engine.EventWaiting)[0].Message.Queue, "the event names the queue it is in now")

	later := b.send(t, eoio("WMS", "A", "A-4"))
	b.waitSettled(t, "A-4 routed", func() bool { return b.count(engine.EventRouted) == 6 })
	out := b.outboundOf(t, later[0].ID)
	require.Equal(t, errorQueue, out.Queue, "it joins the error queue")
	require.Equal(t, domain.StatusHOLD, out.Status)

	clk.Advance(10 * time.Millisecond)
	b.eng.Notify()
	b.waitDelivered(t, 6)
	require.Equal(t, []string{"A-1", "A-2", "A-3", "A-4"}, ofAppQueue(ep.accepted(), "A"))
	require.Equal(t, domain.QueueEmpty, b.queueState(t, errorQueue))

	// The error queue is empty: A's messages share the queue again.
	again := b.send(t, eoio("WMS", "A", "A-5"))
	b.waitDelivered(t, 7)
	require.Equal(t, "XB2O"+code4("WMS")+"EOIO03", b.outboundOf(t, again[0].ID).Queue)
}

// A switch to shared queues and back while the engine delivers: every app
// queue reaches the receiver in the order it was sent.
func TestEOIOSwitchWhileDelivering(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	b.start(t)
	appQueues := []string{"A", "B", "C", "D", "E"}
	n := 0
	sendRound := func(round int) {
		var reqs []domain.SendRequest
		for _, q := range appQueues {
			for i := range 4 {
				reqs = append(reqs, eoio("WMS", q, fmt.Sprintf("%s-%d-%d", q, round, i)))
			}
		}
		b.send(t, reqs...)
		n += len(reqs)
	}
	sendRound(0)
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 2}, b.switchTo(t, 2).Current)
	sendRound(1)
	sendRound(2)
	b.waitDelivered(t, n)
	require.Equal(t, admin.EOIOInactive, b.switchTo(t, 0).State, "everything was delivered: nothing drains")
	sendRound(3)
	b.waitDelivered(t, n)

	for _, q := range appQueues {
		var want []string
		for round := range 4 {
			for i := range 4 {
				want = append(want, fmt.Sprintf("%s-%d-%d", q, round, i))
			}
		}
		require.Equal(t, want, ofAppQueue(ep.accepted(), q), "app queue %s; accepted more than once: %s\nevents %s; log: %s",
			q, ep.repeats(t), b.eventSummary(), b.logSummary())
	}
	st, err := b.admin.EOIOStatus(b.ctx)
	require.NoError(t, err)
	require.Equal(t, admin.EOIOInactive, st.State)
	require.True(t, slices.ContainsFunc(b.eventsOf(engine.EventDelivered), func(e engine.Event) bool {
		return domain.SharedQueueName(e.Message.Queue)
	}), "the shared queues delivered")
}
