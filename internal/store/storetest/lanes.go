package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// The sets of the §10 fixtures. App queues A and C share a queue of a set
// of 4 (CRC-32 modulo 4 is 3 for both), B lands in another; in a set of 8
// A is in queue 3.
var (
	perAppXBQ = domain.EOIOSet{Prefix: domain.PrefixXBQ}
	sharedXB2 = domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}
	sharedXBQ = domain.EOIOSet{Prefix: domain.PrefixXBQ, Queues: 8}
)

// switchTo stores a switch from the old set to the current one.
func (b *testBundle) switchTo(t *testing.T, current, old domain.EOIOSet) {
	t.Helper()
	b.update(t, func(w store.Writer) error {
		return w.SetEOIO(domain.EOIOSwitch{Current: current, Old: old, At: Now(), By: "test"})
	})
}

// eoioOut returns an outbound EOIO message of appQueue for WMS, TBDL in
// its queue of set s.
func eoioOut(s domain.EOIOSet, appQueue string) *domain.Message {
	m := NewOutboundMessage(NewEOIOMessage(appQueue), ReceiverWMS)
	return InQueue(m, s.Outbound(domain.Code4(ReceiverWMS), appQueue))
}

// lane is the outbound lane of app queue a for WMS.
func lane(a string) domain.Lane {
	return domain.Lane{Stage: domain.Outbound, Receiver: ReceiverWMS, Code: domain.Code4(ReceiverWMS), AppQueue: a}
}

// statuses returns the ids and statuses of a queue's open messages in order.
func (b *testBundle) statuses(t *testing.T, queue string) []string {
	t.Helper()
	out := []string{}
	b.view(t, func(r store.Reader) error {
		return r.QueueMessages(queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
			out = append(out, m.ID+" "+string(m.Status))
			return nil
		})
	})
	return out
}

func withStatuses(pairs ...any) []string {
	out := []string{}
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, pairs[i].(*domain.Message).ID+" "+string(pairs[i+1].(domain.Status)))
	}
	return out
}

// divert runs store.Divert on a message as stored, with the HOLD rule in
// its own queue after it, as the engine does.
func (b *testBundle) divert(t *testing.T, id string) string {
	t.Helper()
	var out string
	b.update(t, func(w store.Writer) error {
		m, err := w.Message(id)
		if err != nil {
			return err
		}
		if out, err = store.Divert(w, m, Entry("")); err != nil {
			return err
		}
		return store.RestoreHold(w, m.Queue, Entry(""))
	})
	return out
}

func (b *testBundle) laneWaits(t *testing.T, id string) bool {
	t.Helper()
	var wait bool
	b.view(t, func(r store.Reader) error {
		m, err := r.Message(id)
		if err != nil {
			return err
		}
		wait, err = store.LaneWaits(r, m)
		return err
	})
	return wait
}

// testLanes specifies the rules of §10 that both stores follow through
// package store: where a lane's messages go, when they wait, and how they
// follow a failed message to the error queue.
func testLanes(t *testing.T, open Opener) {
	t.Run("DivertFromASharedQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.switchTo(t, sharedXB2, perAppXBQ)
		a1 := NotDelivered(eoioOut(sharedXB2, "A"), domain.ErrorPermanent)
		c1, a2, a3 := eoioOut(sharedXB2, "C"), eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "A")
		b.insert(t, a1, c1, a2, a3)
		shared := a1.Queue
		require.Equal(t, shared, c1.Queue, "A and C share a queue")

		require.Equal(t, lane("A").ErrorQueue(), b.divert(t, a1.ID))
		require.Equal(t, withStatuses(a1, domain.StatusNDLV, a2, domain.StatusHOLD, a3, domain.StatusHOLD),
			b.statuses(t, lane("A").ErrorQueue()), "the failed message heads the error queue, blocked in order (§4)")
		require.Equal(t, withStatuses(c1, domain.StatusTBDL), b.statuses(t, shared), "the shared queue goes on")
		h := b.history(t, a2.ID)
		require.Contains(t, h[len(h)-2].Reason, "moved to error queue XBQF2107A after "+a1.ID)
		requireConsistent(t, b)
	})

	t.Run("DivertFromASharedOldSetTakesTheNewSetAlong", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.switchTo(t, sharedXB2, sharedXBQ)
		a1 := WithStatus(eoioOut(sharedXBQ, "A"), domain.StatusWAIT)
		x1, a2 := eoioOut(sharedXBQ, "X"), eoioOut(sharedXBQ, "A")
		a3, c1 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C")
		b.insert(t, a1, x1, a2, a3, c1)
		require.Equal(t, lane("A").ErrorQueue(), b.divert(t, a1.ID))
		require.Equal(t, withStatuses(a1, domain.StatusWAIT, a2, domain.StatusHOLD, a3, domain.StatusHOLD),
			b.statuses(t, lane("A").ErrorQueue()), "the old set's, then the new set's: the order they were sent in")
		require.Equal(t, withStatuses(x1, domain.StatusTBDL), b.statuses(t, a1.Queue))
		require.Equal(t, withStatuses(c1, domain.StatusTBDL), b.statuses(t, a3.Queue))
		requireConsistent(t, b)
	})

	t.Run("AnOldQueueOfOneAppQueueStaysBlocked", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.switchTo(t, sharedXB2, perAppXBQ)
		a1 := NotDelivered(eoioOut(perAppXBQ, "A"), domain.ErrorPermanent)
		a2, a3, c1, a4 := eoioOut(perAppXBQ, "A"), eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C"), eoioOut(sharedXB2, "A")
		b.insert(t, a1, a2, a3, c1, a4)
		require.Equal(t, lane("A").ErrorQueue(), b.divert(t, a1.ID))
		require.Equal(t, withStatuses(a1, domain.StatusNDLV, a2, domain.StatusHOLD), b.statuses(t, a1.Queue),
			"the old queue is the app queue's own: blocked as §4 says")
		require.Equal(t, withStatuses(a3, domain.StatusTBDL, a4, domain.StatusTBDL), b.statuses(t, lane("A").ErrorQueue()),
			"the new set's messages of the app queue wait in the error queue, not in the shared queue")
		require.Equal(t, withStatuses(c1, domain.StatusTBDL), b.statuses(t, c1.Queue))
		require.True(t, b.laneWaits(t, a3.ID), "behind the blocked old queue")
		require.False(t, b.laneWaits(t, c1.ID))
		requireConsistent(t, b)
	})

	t.Run("NothingMovesOutsideSharedQueues", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		never := NotDelivered(eoioOut(perAppXBQ, "A"), domain.ErrorPermanent)
		b.insert(t, never, eoioOut(perAppXBQ, "A"))
		require.Empty(t, b.divert(t, never.ID), "a store never switched has no error queues")

		b.switchTo(t, perAppXBQ, sharedXB2)
		own := NotDelivered(eoioOut(perAppXBQ, "B"), domain.ErrorTransient)
		tbdl := eoioOut(sharedXB2, "C")
		b.insert(t, own, tbdl)
		require.Empty(t, b.divert(t, own.ID), "the current set has a queue per app queue")
		require.Empty(t, b.divert(t, tbdl.ID), "only a failed message moves")
		requireConsistent(t, b)
	})

	t.Run("LaneWaits", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		old1 := eoioOut(perAppXBQ, "A")
		b.insert(t, old1)
		require.False(t, b.laneWaits(t, old1.ID), "never switched")
		b.switchTo(t, sharedXB2, perAppXBQ)
		a2, c1 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C")
		inError := InQueue(eoioOut(sharedXB2, "A"), lane("A").ErrorQueue())
		b.insert(t, a2, c1, inError)
		require.False(t, b.laneWaits(t, old1.ID), "the old set comes first")
		require.True(t, b.laneWaits(t, a2.ID), "the new set waits for the old set")
		require.True(t, b.laneWaits(t, inError.ID), "the error queue waits for the old set")
		require.False(t, b.laneWaits(t, c1.ID), "another app queue goes on")
		b.move(t, old1.ID, domain.StatusTBDL, domain.StatusDLNG)
		require.True(t, b.laneWaits(t, a2.ID), "a message in delivery is still ahead")
		b.move(t, old1.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.False(t, b.laneWaits(t, inError.ID))
		require.True(t, b.laneWaits(t, a2.ID), "the new set waits for the error queue")
		b.move(t, inError.ID, domain.StatusTBDL, domain.StatusHOLD)
		b.move(t, inError.ID, domain.StatusHOLD, domain.StatusFAIL)
		require.False(t, b.laneWaits(t, a2.ID))
		require.False(t, b.laneWaits(t, b.insertEO(t)), "EO never waits")
	})

	t.Run("Placement", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		placer := placement.Placer{Role: domain.RoleCentral}
		place := func(stage domain.Stage, a string) string {
			var q string
			b.view(t, func(r store.Reader) error {
				var err error
				if stage == domain.Inbound {
					q, err = placer.Inbound(store.Placement(r), domain.EOIO, a)
				} else {
					q, err = placer.Outbound(store.Placement(r), domain.EOIO, ReceiverWMS, a)
				}
				return err
			})
			return q
		}
		require.Equal(t, "XBQIA", place(domain.Inbound, "A"))
		require.Equal(t, "XBQO2107A", place(domain.Outbound, "A"))

		b.switchTo(t, sharedXB2, perAppXBQ)
		require.Equal(t, "XB2IEOIO03", place(domain.Inbound, "A"))
		require.Equal(t, "XB2O2107EOIO03", place(domain.Outbound, "A"))

		busy := eoioOut(perAppXBQ, "A")
		b.insert(t, busy)
		require.Equal(t, "XB2O2107EOIO03", place(domain.Outbound, "A"), "an old queue that flows is waited for in the new set")
		b.move(t, busy.ID, domain.StatusTBDL, domain.StatusDLNG)
		b.move(t, busy.ID, domain.StatusDLNG, domain.StatusWAIT)
		require.Equal(t, "XBQF2107A", place(domain.Outbound, "A"),
			"an old queue held up by its head is waited for in the error queue, not in a shared queue")
		require.Equal(t, "XB2O2107EOIO03", place(domain.Outbound, "C"))

		b.move(t, busy.ID, domain.StatusWAIT, domain.StatusFAIL)
		inError := InQueue(eoioOut(sharedXB2, "A"), lane("A").ErrorQueue())
		b.insert(t, inError)
		require.Equal(t, "XBQF2107A", place(domain.Outbound, "A"), "while the error queue holds messages, they join it")
		b.move(t, inError.ID, domain.StatusTBDL, domain.StatusDLNG)
		b.move(t, inError.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.Equal(t, "XB2O2107EOIO03", place(domain.Outbound, "A"), "once it is empty, the shared queue again")

		b.switchTo(t, perAppXBQ, sharedXB2)
		require.Equal(t, "XBQIA", place(domain.Inbound, "A"), "switched back")
	})

	t.Run("PlaceCommitted", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		prepared := WithStatus(NewEOIOMessage("A"), domain.StatusPEND)
		b.insert(t, prepared)
		b.switchTo(t, sharedXB2, perAppXBQ)
		sentMeanwhile := InQueue(NewEOIOMessage("A"), sharedXB2.Inbound(domain.RoleCentral, "A"))
		b.insert(t, sentMeanwhile)
		b.update(t, func(w store.Writer) error {
			m, err := w.Message(prepared.ID)
			if err != nil {
				return err
			}
			q, err := store.PlaceCommitted(w, placement.Placer{Role: domain.RoleCentral}, m, Entry(""))
			require.Equal(t, sentMeanwhile.Queue, q)
			return err
		})
		committed := b.move(t, prepared.ID, domain.StatusPEND, domain.StatusTBDL)
		require.Equal(t, sentMeanwhile.Queue, committed.Queue)
		require.Equal(t, idsOf(sentMeanwhile, prepared), b.queueIDs(t, sentMeanwhile.Queue, store.QueueMessagesParams{Open: true}),
			"EOIO order is commit order (§9)")
		requireConsistent(t, b)
	})
}

// insertEO stores an EO message and returns its id.
func (b *testBundle) insertEO(t *testing.T) string {
	t.Helper()
	m := NewMessage()
	b.insert(t, m)
	return m.ID
}
