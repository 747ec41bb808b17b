package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The queues of the §10 fixtures: a shared inbound queue of set XB2 and
// the error queue of app queue A.
const (
	sharedQueue = "XB2IEOIO03"
	errorQueueA = "XBQEA"
)

// inShared returns an EOIO inbound message of appQueue in the shared queue.
func inShared(appQueue string) *domain.Message {
	return InQueue(NewEOIOMessage(appQueue), sharedQueue)
}

func (b *testBundle) eoio(t *testing.T) domain.EOIOSwitch {
	t.Helper()
	var s domain.EOIOSwitch
	b.view(t, func(r store.Reader) error {
		var err error
		s, err = r.EOIO()
		return err
	})
	return s
}

func (b *testBundle) moveTo(t *testing.T, p store.MoveParams) (*domain.Message, error) {
	t.Helper()
	var out *domain.Message
	err := b.store.Update(b.ctx, func(w store.Writer) error {
		m, err := w.Move(p)
		out = m
		return err
	})
	return out, err
}

func testEOIO(t *testing.T, open Opener) {
	t.Run("NeverSwitchedIsTheDefault", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		require.Equal(t, domain.DefaultEOIO, b.eoio(t))
	})

	t.Run("StoredAndReadBack", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		sw := domain.EOIOSwitch{
			Current: domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 8},
			Old:     domain.EOIOSet{Prefix: domain.PrefixXBQ},
			At:      At(3), By: "ops",
		}
		b.update(t, func(w store.Writer) error { return w.SetEOIO(sw) })
		require.Equal(t, sw, b.eoio(t))
		var inTx domain.EOIOSwitch
		b.update(t, func(w store.Writer) error {
			back := sw
			back.Current, back.Old = sw.Old, sw.Current
			if err := w.SetEOIO(back); err != nil {
				return err
			}
			var err error
			inTx, err = w.EOIO()
			return err
		})
		require.Equal(t, domain.PrefixXBQ, inTx.Current.Prefix, "a transaction reads what it wrote")
		require.Equal(t, inTx, b.eoio(t))
	})

	t.Run("RolledBackWithTheTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		boom := errors.New("boom")
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if err := w.SetEOIO(domain.EOIOSwitch{Current: domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 2}}); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Equal(t, domain.DefaultEOIO, b.eoio(t))
	})

	t.Run("AppQueueOfASharedQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		a1, x, a2, a3, y := inShared("A"), inShared("X"), inShared("A"), inShared("A"), inShared("AB")
		a3.Status = domain.StatusDLVD
		b.insert(t, a1, x, a2, a3, y)
		p := store.QueueMessagesParams{Open: true, AppQueue: "A"}
		require.Equal(t, idsOf(a1, a2), b.queueIDs(t, sharedQueue, p))
		p.AfterSeq = a1.Seq
		require.Equal(t, idsOf(a2), b.queueIDs(t, sharedQueue, p))
		p.AfterSeq, p.Limit = 0, 1
		require.Equal(t, idsOf(a1), b.queueIDs(t, sharedQueue, p))
		require.Equal(t, idsOf(a1, a2, a3), b.queueIDs(t, sharedQueue, store.QueueMessagesParams{AppQueue: "A"}),
			"without Open, delivered ones too")
		require.Equal(t, idsOf(y), b.queueIDs(t, sharedQueue, store.QueueMessagesParams{Open: true, AppQueue: "AB"}))
		require.Empty(t, b.queueIDs(t, sharedQueue, store.QueueMessagesParams{Open: true, AppQueue: "NONE"}))

		// It leaves the app queue once final, and with it the filter.
		b.move(t, a1.ID, domain.StatusTBDL, domain.StatusDLNG)
		b.move(t, a1.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.Equal(t, idsOf(a2), b.queueIDs(t, sharedQueue, store.QueueMessagesParams{Open: true, AppQueue: "A"}))

		// A queue of one app queue filters alike.
		own := NewEOIOMessage("A")
		b.insert(t, own)
		require.Equal(t, idsOf(own), b.queueIDs(t, own.Queue, store.QueueMessagesParams{Open: true, AppQueue: "A"}))
		require.Empty(t, b.queueIDs(t, own.Queue, store.QueueMessagesParams{Open: true, AppQueue: "X"}))
		requireConsistent(t, b)
	})
}

func testMove(t *testing.T, open Opener) {
	t.Run("ToTheEndOfAnotherQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		a1, x, a2 := inShared("A"), inShared("X"), inShared("A")
		a1 = NotDelivered(a1, domain.ErrorPermanent)
		b.insert(t, a1, x, a2)
		h := Entry("moved to the error queue")
		moved, err := b.moveTo(t, store.MoveParams{ID: a1.ID, From: []domain.Status{domain.StatusNDLV}, Queue: errorQueueA, History: h})
		require.NoError(t, err)
		require.Equal(t, errorQueueA, moved.Queue)
		require.Equal(t, uint64(1), moved.Seq, "the first message of a new queue")
		require.Equal(t, domain.StatusNDLV, moved.Status, "a move keeps the status")
		require.Equal(t, a1.Error, moved.Error)
		_, err = b.moveTo(t, store.MoveParams{ID: a2.ID, From: []domain.Status{domain.StatusTBDL}, Queue: errorQueueA, History: h})
		require.NoError(t, err)

		require.Equal(t, moved, b.message(t, a1.ID))
		require.Equal(t, idsOf(a1, a2), b.queueIDs(t, errorQueueA, store.QueueMessagesParams{Open: true}))
		require.Equal(t, idsOf(x), b.queueIDs(t, sharedQueue, store.QueueMessagesParams{Open: true}))
		require.Empty(t, b.queueIDs(t, sharedQueue, store.QueueMessagesParams{Open: true, AppQueue: "A"}))
		q := b.queue(t, errorQueueA)
		require.Equal(t, domain.EOIO, q.QoS)
		require.Equal(t, domain.Inbound, q.Stage)
		require.Equal(t, uint64(2), q.LastSeq)
		require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusTBDL: 1}, b.counts(t, errorQueueA))
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, b.counts(t, sharedQueue))
		require.Equal(t, a1.ID, b.headID(t, errorQueueA))
		hist := b.history(t, a1.ID)
		last := hist[len(hist)-1]
		require.Equal(t, domain.StatusNDLV, last.From)
		require.Equal(t, domain.StatusNDLV, last.To)
		require.Equal(t, h.Reason, last.Reason)
		require.Equal(t, PayloadOf(a1), b.payload(t, a1.ID), "the payload goes along")
		requireConsistent(t, b)
	})

	t.Run("OutboundQueueGetsTheReceiver", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := InQueue(NewOutboundMessage(NewEOIOMessage("A"), ReceiverWMS), "XB2O2107EOIO03")
		b.insert(t, m)
		lane := domain.LaneOf(m)
		_, err := b.moveTo(t, store.MoveParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL}, Queue: lane.ErrorQueue(), History: Entry("moved")})
		require.NoError(t, err)
		q := b.queue(t, lane.ErrorQueue())
		require.Equal(t, ReceiverWMS, q.Receiver)
		require.Equal(t, domain.Outbound, q.Stage)
		requireConsistent(t, b)
	})

	t.Run("PendMovesWithoutSeq", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewEOIOMessage("A"), domain.StatusPEND)
		b.insert(t, m, NewEOIOMessage("A"))
		moved, err := b.moveTo(t, store.MoveParams{ID: m.ID, From: []domain.Status{domain.StatusPEND}, Queue: sharedQueue, History: Entry("placed")})
		require.NoError(t, err)
		require.Zero(t, moved.Seq)
		require.Equal(t, map[domain.Status]int64{domain.StatusPEND: 1}, b.counts(t, sharedQueue))
		committed := b.move(t, m.ID, domain.StatusPEND, domain.StatusTBDL)
		require.Equal(t, sharedQueue, committed.Queue)
		require.Equal(t, uint64(1), committed.Seq, "its seq comes from the queue it was committed in")
		requireConsistent(t, b)
	})

	t.Run("Refusals", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		tbdl, dlng, eo := inShared("A"), WithStatus(inShared("A"), domain.StatusDLNG), NewMessage()
		out := NewOutboundMessage(NewEOIOMessage("A"), ReceiverWMS)
		b.insert(t, tbdl, dlng, eo, out)
		before := b.snapshot(t)
		move := func(id string, from domain.Status, queue string) error {
			_, err := b.moveTo(t, store.MoveParams{ID: id, From: []domain.Status{from}, Queue: queue, History: Entry("moved")})
			return err
		}
		require.ErrorIs(t, move(tbdl.ID, domain.StatusNDLV, errorQueueA), domain.ErrConflict, "compare-and-set on the status")
		require.ErrorIs(t, move(dlng.ID, domain.StatusDLNG, errorQueueA), domain.ErrInvalid, "a message in delivery stays")
		require.ErrorIs(t, move(tbdl.ID, domain.StatusTBDL, sharedQueue), domain.ErrInvalid, "its own queue")
		require.ErrorIs(t, move(tbdl.ID, domain.StatusTBDL, out.Queue), domain.ErrInvalid, "an outbound queue")
		require.ErrorIs(t, move(tbdl.ID, domain.StatusTBDL, eo.Queue), domain.ErrInvalid, "an EO queue")
		require.ErrorIs(t, move(tbdl.ID, domain.StatusTBDL, ""), domain.ErrInvalid, "no queue")
		require.ErrorIs(t, move(domain.NewID(), domain.StatusTBDL, errorQueueA), domain.ErrNotFound)
		require.Equal(t, before, b.snapshot(t), "a refused move changes nothing")
	})
}
