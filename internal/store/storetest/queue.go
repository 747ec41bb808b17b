package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testQueueMessages(t *testing.T, open Opener) {
	t.Run("SeqOrderAndOpenOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		var msgs []*domain.Message
		for _, s := range []domain.Status{
			domain.StatusDLVD, domain.StatusTBDL, domain.StatusPEND, domain.StatusNDLV, domain.StatusFAIL,
			domain.StatusWAIT, domain.StatusDLNG, domain.StatusHOLD,
		} {
			msgs = append(msgs, WithStatus(NewMessage(), s))
		}
		// Inserted out of id order: the queue's order is its seq, not the id.
		b.insert(t, msgs[7], msgs[0], msgs[1], msgs[2], msgs[3], msgs[4], msgs[5], msgs[6])
		all := idsOf(msgs[7], msgs[0], msgs[1], msgs[3], msgs[4], msgs[5], msgs[6])
		require.Equal(t, all, b.queueIDs(t, msgs[0].Queue, store.QueueMessagesParams{}), "every message with a seq")
		openIDs := idsOf(msgs[7], msgs[1], msgs[3], msgs[5], msgs[6])
		require.Equal(t, openIDs, b.queueIDs(t, msgs[0].Queue, store.QueueMessagesParams{Open: true}), "not PEND, DLVD or FAIL")
	})

	t.Run("AfterSeqAndLimit", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		var msgs []*domain.Message
		for range 10 {
			msgs = append(msgs, NewMessage())
		}
		b.insert(t, msgs...)
		queue := msgs[0].Queue
		require.Equal(t, idsOf(msgs[3:7]...), b.queueIDs(t, queue, store.QueueMessagesParams{AfterSeq: 3, Limit: 4}))
		require.Equal(t, idsOf(msgs[3:7]...), b.queueIDs(t, queue, store.QueueMessagesParams{AfterSeq: 3, Limit: 4, Open: true}))
		require.Equal(t, idsOf(msgs[8:]...), b.queueIDs(t, queue, store.QueueMessagesParams{AfterSeq: 8}))
		require.Empty(t, b.queueIDs(t, queue, store.QueueMessagesParams{AfterSeq: 10}))
		require.Equal(t, idsOf(msgs[:2]...), b.queueIDs(t, queue, store.QueueMessagesParams{Limit: 2}))
	})

	t.Run("KeepsQueuesApart", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		// One queue's name is the start of the other's.
		short, long := NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS_DE")
		short2, long2 := NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS_DE")
		b.insert(t, long, short, long2, short2, NewMessage())
		require.Equal(t, idsOf(short, short2), b.queueIDs(t, short.Queue, store.QueueMessagesParams{}))
		require.Equal(t, idsOf(long, long2), b.queueIDs(t, long.Queue, store.QueueMessagesParams{Open: true}))
		require.Empty(t, b.queueIDs(t, "XBQIORDER", store.QueueMessagesParams{}), "a queue that does not exist has no messages")
		require.Equal(t, short.ID, b.headID(t, short.Queue))
	})

	t.Run("ErrStopEndsTheWalk", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.insert(t, NewMessage(), NewMessage(), NewMessage())
		calls := 0
		err := b.store.View(b.ctx, func(r store.Reader) error {
			return r.QueueMessages(NewMessage().Queue, store.QueueMessagesParams{}, func(*domain.Message) error {
				calls++
				return store.ErrStop
			})
		})
		require.NoError(t, err)
		require.Equal(t, 1, calls)
	})
}

func testHead(t *testing.T, open Opener) {
	t.Run("FirstOpenMessageInSeqOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		done, first, second := WithStatus(NewMessage(), domain.StatusDLVD), NewMessage(), NewMessage()
		b.insert(t, done, first, second)
		head := b.head(t, first.Queue)
		require.Equal(t, first.ID, head.ID)
		require.Equal(t, b.message(t, first.ID), head, "the head is the whole message")

		b.move(t, first.ID, domain.StatusTBDL, domain.StatusDLNG)
		require.Equal(t, first.ID, b.headID(t, first.Queue), "a DLNG head stays head")
		b.move(t, first.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.Equal(t, second.ID, b.headID(t, first.Queue), "the next message becomes head")
	})

	t.Run("NoneWithoutOpenMessages", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		require.Nil(t, b.head(t, "XBTI0000"), "a queue that does not exist")
		done, failed := WithStatus(NewMessage(), domain.StatusDLVD), WithStatus(NewMessage(), domain.StatusFAIL)
		b.insert(t, done, failed)
		require.Nil(t, b.head(t, done.Queue), "only final messages")
	})

	t.Run("PendIsNotHead", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		pend := WithStatus(NewMessage(), domain.StatusPEND)
		b.insert(t, pend)
		require.Nil(t, b.head(t, pend.Queue))
		later := NewMessage()
		b.insert(t, later)
		require.Equal(t, later.ID, b.headID(t, pend.Queue))
		b.move(t, pend.ID, domain.StatusPEND, domain.StatusTBDL)
		require.Equal(t, later.ID, b.headID(t, pend.Queue), "a committed message queues behind what came before its commit")
	})

	t.Run("WaitIsHead", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		wait, next := WithStatus(NewMessage(), domain.StatusWAIT), NewMessage()
		b.insert(t, wait, next)
		require.Equal(t, wait.ID, b.headID(t, wait.Queue))
	})

	t.Run("EOPermanentErrorIsPassedOver", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		bad1, bad2, next := NotDelivered(NewMessage(), domain.ErrorPermanent), NotDelivered(NewMessage(), domain.ErrorPermanent), NewMessage()
		b.insert(t, bad1, bad2, next)
		require.Equal(t, next.ID, b.headID(t, next.Queue))
		require.Equal(t, idsOf(bad1, bad2, next), b.queueIDs(t, next.Queue, store.QueueMessagesParams{Open: true}), "it stays listed under its queue")
		b.move(t, next.ID, domain.StatusTBDL, domain.StatusDLNG)
		b.move(t, next.ID, domain.StatusDLNG, domain.StatusDLVD)
		require.Nil(t, b.head(t, next.Queue), "nothing left holds the queue up")
	})

	t.Run("EOHeadIsTheMessageThatHoldsTheQueueUp", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		// With a window, a message that blocks or WAITs can stand behind
		// others: it decides the queue's state wherever it stands.
		first, waiting, blocking, last := NewMessage(), WithStatus(NewMessage(), domain.StatusWAIT),
			NotDelivered(NewMessage(), domain.ErrorTransient), NewMessage()
		b.insert(t, first, last)
		require.Equal(t, first.ID, b.headID(t, first.Queue), "nothing holds the queue up: its first message")
		b.insert(t, waiting)
		require.Equal(t, waiting.ID, b.headID(t, first.Queue), "a WAIT behind TBDL messages")
		b.insert(t, blocking)
		require.Equal(t, blocking.ID, b.headID(t, first.Queue), "a blocking NDLV before a WAIT, behind a TBDL")
		b.move(t, blocking.ID, domain.StatusNDLV, domain.StatusFAIL)
		require.Equal(t, waiting.ID, b.headID(t, first.Queue), "then the WAIT")
		b.move(t, waiting.ID, domain.StatusWAIT, domain.StatusTBDL)
		require.Equal(t, first.ID, b.headID(t, first.Queue))
	})

	t.Run("EOBlacklistedIsPassedOver", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		bad, next := NotDelivered(NewMessage(), domain.ErrorCrash), NewMessage()
		b.insert(t, bad, next)
		require.Equal(t, next.ID, b.headID(t, next.Queue), "a blacklisted EO message leaves its queue (§4)")
	})

	t.Run("EOTransientErrorBlocks", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		for i, c := range []domain.ErrorClass{domain.ErrorTransient, domain.ErrorAdmin} {
			queue := domain.EOInboundQueue(domain.RoleCentral, i)
			skipped := InQueue(NotDelivered(NewMessage(), domain.ErrorPermanent), queue)
			blocking := InQueue(NotDelivered(NewMessage(), c), queue)
			b.insert(t, skipped, blocking, InQueue(NewMessage(), queue))
			require.Equal(t, blocking.ID, b.headID(t, queue), "error class %s", c)
		}
	})

	t.Run("EOIOPermanentErrorIsHead", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		bad := NotDelivered(NewEOIOMessage("ORDERS"), domain.ErrorPermanent)
		hold := WithStatus(NewEOIOMessage("ORDERS"), domain.StatusHOLD)
		b.insert(t, bad, hold)
		require.Equal(t, bad.ID, b.headID(t, bad.Queue), "an EOIO queue stays blocked in order")
		b.move(t, bad.ID, domain.StatusNDLV, domain.StatusFAIL)
		require.Equal(t, hold.ID, b.headID(t, bad.Queue))
	})
}

func testQueues(t *testing.T, open Opener) {
	t.Run("NameOrderAfterAName", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		names := []string{"XBTI0003", "XBQIORDERS_DE", "XBTI0000", "XBQIORDERS", "XBTOE8B9", "XBTI0001"}
		for _, n := range names {
			b.insert(t, InQueue(NewMessage(), n))
		}
		walk := func(after string, stopAt int) []string {
			got := []string{}
			b.view(t, func(r store.Reader) error {
				return r.Queues(after, func(q *store.QueueRecord) error {
					got = append(got, q.Name)
					if len(got) == stopAt {
						return store.ErrStop
					}
					return nil
				})
			})
			return got
		}
		require.Equal(t, []string{"XBQIORDERS", "XBQIORDERS_DE", "XBTI0000", "XBTI0001", "XBTI0003", "XBTOE8B9"}, walk("", 0))
		require.Equal(t, []string{"XBTI0001", "XBTI0003", "XBTOE8B9"}, walk("XBTI0000", 0))
		require.Equal(t, []string{"XBTI0003", "XBTOE8B9"}, walk("XBTI0002", 0), "after a name that is no queue")
		require.Equal(t, []string{"XBQIORDERS", "XBQIORDERS_DE"}, walk("", 2))
		require.Empty(t, walk("XBTOE8B9", 0))
	})

	t.Run("MissingQueueIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		var getErr, stopErr error
		b.view(t, func(r store.Reader) error {
			_, getErr = r.Queue("XBTI0000")
			return nil
		})
		require.ErrorIs(t, getErr, domain.ErrNotFound)
		require.ErrorContains(t, getErr, "XBTI0000")
		stopErr = b.store.Update(b.ctx, func(w store.Writer) error { return w.SetStopped("XBTI0000", true) })
		require.ErrorIs(t, stopErr, domain.ErrNotFound)
	})

	t.Run("StopAndStart", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		b.update(t, func(w store.Writer) error { return w.SetStopped(m.Queue, true) })
		require.True(t, b.queue(t, m.Queue).Stopped)
		b.insert(t, NewMessage())
		q := b.queue(t, m.Queue)
		require.True(t, q.Stopped, "a stopped queue keeps accepting messages")
		require.Equal(t, int64(2), q.Counts[domain.StatusTBDL])
		b.update(t, func(w store.Writer) error { return w.SetStopped(m.Queue, false) })
		require.False(t, b.queue(t, m.Queue).Stopped)
	})
}
