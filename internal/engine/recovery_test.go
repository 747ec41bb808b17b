package engine_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
)

// outboundMsg returns a new outbound message for receiver; appQueue makes
// it EOIO.
func outboundMsg(receiver, appQueue string) *domain.Message {
	m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: receiver,
		Stage: domain.Outbound, Status: domain.StatusTBDL, Queue: "XBTO" + code4(receiver)}
	if appQueue != "" {
		m.QoS, m.AppQueue, m.Queue = domain.EOIO, appQueue, "XBQO"+code4(receiver)+appQueue
	}
	return m
}

// insert stores messages TBDL, as routing would have.
func (b *testBundle) insert(t *testing.T, msgs ...*domain.Message) {
	t.Helper()
	b.update(t, func(w store.Writer) error {
		for _, m := range msgs {
			if err := w.Insert(m, []byte(m.ID), domain.HistoryEntry{Actor: "test", Reason: "inserted"}); err != nil {
				return err
			}
		}
		return nil
	})
}

// inFlightOnDeadNode stores m and makes it DLNG on node dead-node, which
// then dies: it has crashed `crashes` times before.
func (b *testBundle) inFlightOnDeadNode(t *testing.T, m *domain.Message, crashes int) {
	t.Helper()
	b.inFlightOn(t, "dead-node", m, crashes)
}

// inFlightOn stores m as DLNG on the named dead node, having crashed
// `crashes` times before.
func (b *testBundle) inFlightOn(t *testing.T, node string, m *domain.Message, crashes int) {
	t.Helper()
	b.insert(t, m)
	b.update(t, func(w store.Writer) error {
		_, err := w.Transition(store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG,
			Update: func(m *domain.Message) {
				m.Node, m.Attempts, m.Crashes = node, 1, crashes
			},
			History: domain.HistoryEntry{Node: node, Actor: "engine", Reason: "delivery attempt 1"},
		})
		return err
	})
}

// innocents stores n EOIO queues of two TBDL messages each.
func (b *testBundle) innocents(t *testing.T, n int) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	for i := range n {
		aq := string(rune('A' + i))
		out = append(out, outboundMsg("WMS", aq), outboundMsg("WMS", aq))
	}
	b.insert(t, out...)
	return out
}

func last(h []domain.HistoryEntry) domain.HistoryEntry { return h[len(h)-1] }

func TestCrashCandidateIsDeliveredAlone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	candidate := outboundMsg("WMS", "")
	b.inFlightOnDeadNode(t, candidate, 0)
	others := b.innocents(t, 3)
	ep.respond(func(r *http.Request, a arrival, _ int) int {
		if a.ID == candidate.ID {
			busy(r, nil) // time enough for anything that wrongly starts meanwhile to show up
		}
		return http.StatusOK
	})
	b.start(t)
	b.waitDelivered(t, 1+len(others))

	require.Empty(t, ep.overlapped(candidate.ID), "nothing is delivered while the candidate is")
	require.Equal(t, candidate.ID, ep.all()[0].ID, "the candidate goes first")

	m := b.message(t, candidate.ID)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 1, m.Crashes)
	require.Equal(t, 2, m.Attempts, "the attempt that crashed counts")
	require.False(t, m.Blacklisted)
	require.Equal(t, []string{">TBDL", "TBDL>DLNG", "DLNG>TBDL", "TBDL>DLNG", "DLNG>DLVD"}, transitions(m.History))
	rec := m.History[2]
	require.Equal(t, "crash recovery: node dead-node died while delivering it (crash 1) of 2 allowed; it is delivered alone next",
		rec.Reason)
	require.Equal(t, "test-node", rec.Node)
	require.Equal(t, "engine", rec.Actor)

	for _, o := range others {
		m := b.message(t, o.ID)
		require.Equal(t, domain.StatusDLVD, m.Status)
		require.Zero(t, m.Crashes, "only messages that were DLNG are touched")
	}
	require.Len(t, b.eventsOf(engine.EventRecovered), 1)
	require.Empty(t, b.eventsOf(engine.EventBlacklisted))
}

func TestCrashCandidateRetryIsDeliveredAloneToo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.Blacklisting.Crashes = 3
	ep := b.newEndpoint(t, "WMS")
	candidate := outboundMsg("WMS", "")
	b.inFlightOnDeadNode(t, candidate, 0)
	others := b.innocents(t, 2)
	ep.respond(func(r *http.Request, a arrival, nth int) int {
		switch {
		case a.ID == candidate.ID && nth == 0:
			return http.StatusServiceUnavailable // WAIT, and the retry is soon due
		case a.ID != candidate.ID:
			busy(r, nil) // still in flight when the candidate's retry is due
		}
		return http.StatusOK
	})
	b.start(t)
	b.waitDelivered(t, 1+len(others))

	// The retry may be the one that takes the process down again: if
	// others were in flight then, they would be blamed too.
	require.Empty(t, ep.overlapped(candidate.ID), "nothing is delivered while the candidate's retry is")
	m := b.message(t, candidate.ID)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 3, m.Attempts)
	require.Equal(t, 1, m.Crashes)
}

func TestCrashAtTheThresholdBlacklists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	eoioHead := outboundMsg("WMS", "ORDERS")
	b.inFlightOnDeadNode(t, eoioHead, 1)
	eoioNext := []*domain.Message{outboundMsg("WMS", "ORDERS"), outboundMsg("WMS", "ORDERS")}
	b.insert(t, eoioNext...)
	// Each was alone in flight on its node (isolation makes it so): the
	// crash is theirs.
	eoHead := outboundMsg("WMS", "")
	b.inFlightOn(t, "dead-node-2", eoHead, 1)
	eoNext := outboundMsg("WMS", "")
	b.insert(t, eoNext)
	b.start(t)
	b.waitSettled(t, "recovery and the EO queue's next message", func() bool {
		return b.count(engine.EventRecovered) == 1 && b.count(engine.EventDelivered) == 1
	})

	for _, head := range []*domain.Message{eoioHead, eoHead} {
		m := b.message(t, head.ID)
		require.Equal(t, domain.StatusNDLV, m.Status)
		require.True(t, m.Blacklisted)
		require.Equal(t, 2, m.Crashes)
		require.Equal(t, domain.ErrorCrash, m.ErrorClass)
		require.Regexp(t, `^blacklisted: the engine process died 2 times while delivering it \(last: node dead-node(-2)?\)$`, m.Error)
		require.Contains(t, []string{"dead-node", "dead-node-2"}, m.Node, "blacklist list shows the node it took down")
		h := last(m.History)
		require.Equal(t, "DLNG>NDLV", transitions([]domain.HistoryEntry{h})[0])
		require.Equal(t, m.Error, h.Reason)
		require.Equal(t, "test-node", h.Node)
	}
	require.Equal(t, domain.QueueBlocked, b.queueState(t, eoioHead.Queue), "a blacklisted EOIO head blocks its queue")
	for _, s := range eoioNext {
		m := b.message(t, s.ID)
		require.Equal(t, domain.StatusHOLD, m.Status)
		require.Equal(t, "held behind blacklisted "+eoioHead.ID, last(m.History).Reason)
	}
	require.Equal(t, domain.StatusDLVD, b.message(t, eoNext.ID).Status, "EO: a blacklisted message leaves its queue, the next goes on (§4)")
	got := ep.all()
	require.Len(t, got, 1, "a blacklisted message is never delivered again")
	require.Equal(t, eoNext.ID, got[0].ID)

	bl := b.eventsOf(engine.EventBlacklisted)
	require.Len(t, bl, 2)
	require.ElementsMatch(t, []string{eoioHead.ID, eoHead.ID}, []string{bl[0].Message.ID, bl[1].Message.ID})
}

func TestCrashRecoveryWithoutBlacklisting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.Blacklisting.Enabled = false
	ep := b.newEndpoint(t, "WMS")
	crashed := outboundMsg("WMS", "")
	b.inFlightOnDeadNode(t, crashed, 1) // at the threshold, were it enabled
	others := b.innocents(t, 2)

	// The crashed message is not delivered alone: it and another delivery
	// wait for each other, so they can only finish side by side.
	var arrivedOnce, companyOnce sync.Once
	arrived, company := make(gate), make(gate)
	ep.respond(func(r *http.Request, a arrival, _ int) int {
		if a.ID == crashed.ID {
			arrivedOnce.Do(arrived.open)
			company.wait(r)
		} else {
			companyOnce.Do(company.open)
			arrived.wait(r)
		}
		return http.StatusOK
	})
	b.start(t)
	b.waitDelivered(t, 1+len(others))

	require.NotEmpty(t, ep.overlapped(crashed.ID))
	m := b.message(t, crashed.ID)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 2, m.Crashes)
	require.False(t, m.Blacklisted)
	require.Equal(t, "crash recovery: node dead-node died while delivering it (crash 2)", m.History[2].Reason)
	require.Empty(t, b.eventsOf(engine.EventBlacklisted))
}

// A crash is blamed only on a message that was alone in flight: when the
// dead node had several, none is blacklisted, even one at the threshold, and
// each goes back to be delivered alone.
func TestCrashWithOthersInFlightBlacklistsNone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newEndpoint(t, "WMS")
	atThreshold, bystander := outboundMsg("WMS", "A"), outboundMsg("WMS", "B")
	b.inFlightOnDeadNode(t, atThreshold, 1)
	b.inFlightOnDeadNode(t, bystander, 0)
	b.start(t)
	b.waitDelivered(t, 2)
	for _, id := range []string{atThreshold.ID, bystander.ID} {
		m := b.message(t, id)
		require.Equal(t, domain.StatusDLVD, m.Status)
		require.False(t, m.Blacklisted)
	}
	require.Equal(t, 2, b.message(t, atThreshold.ID).Crashes)
	require.Zero(t, b.count(engine.EventBlacklisted))
}

// A process killed between two batches of one operator action can leave
// messages HOLD behind a head that no longer blocks: the engine's start puts
// them right.
func TestStartReleasesMessagesHeldBehindNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	held := []*domain.Message{outboundMsg("WMS", "ORDERS"), outboundMsg("WMS", "ORDERS")}
	b.insert(t, held...)
	for _, m := range held {
		b.update(t, func(w store.Writer) error {
			_, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL},
				To: domain.StatusHOLD, History: domain.HistoryEntry{Actor: "test", Reason: "held by a killed action"}})
			return err
		})
	}
	b.start(t)
	b.waitDelivered(t, 2)
	require.Equal(t, []string{held[0].ID, held[1].ID}, []string{ep.all()[0].ID, ep.all()[1].ID}, "in order")
}
