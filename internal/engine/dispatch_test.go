package engine_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
)

func TestQueuesAreServedRoundRobin(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.Workers = 1
	ep := b.newEndpoint(t, "WMS")
	first := make(gate)
	ep.respond(func(r *http.Request, a arrival, _ int) int {
		if a.Payload == "A0" {
			first.wait(r)
		}
		return http.StatusOK
	})
	var reqs []domain.SendRequest
	var want []string
	for i := range 20 {
		want = append(want, "A"+strconv.Itoa(i))
		reqs = append(reqs, eoio("WMS", "BIG", want[i]))
	}
	b.send(t, reqs...)
	b.start(t)

	// While the busy queue's first message is being delivered, a message
	// for another queue arrives.
	b.waitFor(t, "the first delivery", func() bool { return len(ep.all()) == 1 })
	b.send(t, eoio("WMS", "SMALL", "B"))
	first.open()
	b.waitDelivered(t, 21)

	got := ep.accepted()
	pos := slices.Index(got, "B")
	require.GreaterOrEqual(t, pos, 0)
	require.Less(t, pos, 20, "the small queue does not wait for the big one to drain: %v", got)
	var big []string
	for _, p := range got {
		if p != "B" {
			big = append(big, p)
		}
	}
	require.Equal(t, want, big, "the big queue keeps its order; accepted more than once: %s\nevents %s; log: %s",
		ep.repeats(t), b.eventSummary(), b.logSummary())
}

func TestStoppedQueuesAreNotDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	in := b.send(t, eo("WMS", "1"), eo("WMS", "2"))
	inbound := in[0].Queue
	require.Equal(t, "XBTI0000", inbound)
	b.update(t, func(w store.Writer) error { return w.SetStopped(inbound, true) })
	b.start(t)

	b.waitSettled(t, "crash recovery", func() bool { return b.count(engine.EventRecovered) == 1 })
	require.Equal(t, []domain.Status{domain.StatusTBDL, domain.StatusTBDL},
		[]domain.Status{b.message(t, in[0].ID).Status, b.message(t, in[1].ID).Status})
	require.Equal(t, domain.QueueStopped, b.queueState(t, inbound))

	// Started again, the inbound queue is routed; now its outbound queue
	// is stopped instead.
	outbound := "XBTO" + code4("WMS")
	b.update(t, func(w store.Writer) error {
		// The outbound queue does not exist yet: a message of its own
		// creates it, stopped before anything is routed there.
		m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: "WMS", Queue: outbound,
			Stage: domain.Outbound, Status: domain.StatusTBDL}
		if err := w.Insert(m, []byte("0"), domain.HistoryEntry{Actor: "test"}); err != nil {
			return err
		}
		if err := w.SetStopped(outbound, true); err != nil {
			return err
		}
		return w.SetStopped(inbound, false)
	})
	b.eng.Notify()
	b.waitSettled(t, "both routed", func() bool { return b.count(engine.EventRouted) == 2 })
	require.Equal(t, []domain.Status{domain.StatusTBDL, domain.StatusTBDL}, b.statusOf(t, in...))
	require.Empty(t, ep.all())

	b.update(t, func(w store.Writer) error { return w.SetStopped(outbound, false) })
	b.eng.Notify()
	b.waitDelivered(t, 3)
	require.ElementsMatch(t, []string{"0", "1", "2"}, ep.accepted(), "EO: in any order, up to the window at once")
}
