package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testDeleteQueue: DeleteQueue removes an empty queue's record and
// refuses one that holds messages, whatever their status; deletes racing
// sends never lose a message and never leave one in a queue without a
// record.
func testDeleteQueue(t *testing.T, open Opener) {
	t.Run("RemovesAnEmptyQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		require.Empty(t, b.counts(t, m.Queue), "the record stays, counting nothing")

		b.update(t, func(w store.Writer) error { return w.DeleteQueue(m.Queue) })
		err := b.store.View(b.ctx, func(r store.Reader) error {
			_, err := r.Queue(m.Queue)
			return err
		})
		require.ErrorIs(t, err, domain.ErrNotFound)
		b.view(t, func(r store.Reader) error {
			return r.Queues("", func(q *store.QueueRecord) error {
				require.NotEqual(t, m.Queue, q.Name)
				return nil
			})
		})

		// The queue's next message creates it again.
		again := NewMessage()
		b.insert(t, again)
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, b.counts(t, again.Queue))
		require.Equal(t, idsOf(again), b.queueIDs(t, again.Queue, store.QueueMessagesParams{}))
	})

	t.Run("RefusesAQueueThatHoldsMessages", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		for i, s := range []domain.Status{domain.StatusTBDL, domain.StatusPEND, domain.StatusDLVD, domain.StatusFAIL} {
			m := InQueue(WithStatus(NewMessage(), s), domain.EOInboundQueue(domain.RoleCentral, i))
			b.insert(t, m)
			err := b.store.Update(b.ctx, func(w store.Writer) error { return w.DeleteQueue(m.Queue) })
			require.ErrorIs(t, err, store.ErrQueueHolds, "a queue with a %s message", s)
			require.ErrorIs(t, err, domain.ErrConflict)
			require.ErrorContains(t, err, fmt.Sprintf("queue %s holds 1 message (1 %s)", m.Queue, s))
			require.Equal(t, map[domain.Status]int64{s: 1}, b.counts(t, m.Queue), "nothing changed")
		}
	})

	t.Run("RefusesAQueueWhoseMessageThisTransactionAdded", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		first := NewMessage()
		b.insert(t, first)
		b.update(t, func(w store.Writer) error { return w.Delete(first.ID) })
		m := NewMessage()
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if err := w.Insert(m.Clone(), PayloadOf(m), Entry("received")); err != nil {
				return err
			}
			return w.DeleteQueue(m.Queue)
		})
		require.ErrorIs(t, err, store.ErrQueueHolds)
		require.Empty(t, b.counts(t, m.Queue), "the transaction stored nothing")
	})

	t.Run("RollsBackWithItsTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		boom := errors.New("boom")
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if err := w.DeleteQueue(m.Queue); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Equal(t, m.Queue, b.queue(t, m.Queue).Name, "the queue is still there")
	})

	t.Run("MissingQueueIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		err := b.store.Update(b.ctx, func(w store.Writer) error { return w.DeleteQueue("XBTI9999") })
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.ErrorContains(t, err, "XBTI9999")
	})

	t.Run("DeletesRacingSendsLoseNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		// Empty queues, EO and EOIO, each raced by a sender of one
		// message and by deletes.
		const queues = 24
		names := make([]string, queues)
		for i := range queues {
			m := InQueue(NewMessage(), domain.EOInboundQueue(domain.RoleCentral, i))
			if i%2 == 1 {
				m = NewEOIOMessage(fmt.Sprintf("APP%02d", i))
			}
			names[i] = m.Queue
			b.insert(t, m)
			b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		}
		sent := make([]*domain.Message, queues)
		start := make(chan struct{})
		errs := make(chan error, 4*queues)
		var wg sync.WaitGroup
		for i, name := range names {
			m := InQueue(NewMessage(), name)
			if i%2 == 1 {
				m = NewEOIOMessage(fmt.Sprintf("APP%02d", i))
			}
			sent[i] = m
			wg.Go(func() {
				<-start
				if err := b.store.Update(b.ctx, func(w store.Writer) error {
					return w.Insert(m.Clone(), PayloadOf(m), Entry("received"))
				}); err != nil {
					errs <- fmt.Errorf("send to %s: %w", name, err)
				}
			})
			for range 2 {
				wg.Go(func() {
					<-start
					err := b.store.Update(b.ctx, func(w store.Writer) error { return w.DeleteQueue(name) })
					if err != nil && !errors.Is(err, store.ErrQueueHolds) && !errors.Is(err, domain.ErrNotFound) {
						errs <- fmt.Errorf("delete %s: %w", name, err)
					}
				})
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for _, m := range sent {
			got := b.message(t, m.ID)
			require.Equal(t, m.Queue, got.Queue)
			require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, b.counts(t, m.Queue),
				"queue %s has a record that counts its message", m.Queue)
			require.Equal(t, idsOf(m), b.queueIDs(t, m.Queue, store.QueueMessagesParams{Open: true}))
		}
	})
}
