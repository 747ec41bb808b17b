package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testDelete(t *testing.T, open Opener) {
	t.Run("RemovesEverything", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m, other := NotDelivered(NewMessage(), domain.ErrorTransient), NewMessage()
		b.insert(t, m, other)
		b.move(t, m.ID, domain.StatusNDLV, domain.StatusTBDL)
		require.Equal(t, m.ID, b.headID(t, m.Queue))

		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })

		var errs [3]error
		b.view(t, func(r store.Reader) error {
			_, errs[0] = r.Message(m.ID)
			_, errs[1] = r.Payload(m.ID)
			_, errs[2] = r.History(m.ID)
			return nil
		})
		for _, err := range errs {
			require.ErrorIs(t, err, domain.ErrNotFound)
		}
		require.Equal(t, idsOf(other), b.ids(t, store.MessageFilter{}))
		require.Equal(t, idsOf(other), b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL, domain.StatusNDLV}}))
		require.Equal(t, idsOf(other), b.queueIDs(t, m.Queue, store.QueueMessagesParams{}))
		require.Equal(t, idsOf(other), b.queueIDs(t, m.Queue, store.QueueMessagesParams{Open: true}))
		require.Equal(t, other.ID, b.headID(t, m.Queue))
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, b.queue(t, m.Queue).Counts)
	})

	t.Run("RollsBackPend", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusPEND)
		b.insert(t, m)
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		require.Empty(t, b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}}))
		require.Empty(t, b.queue(t, m.Queue).Counts, "the queue record stays, with no counts")
	})

	t.Run("MissingMessageIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		id := domain.NewID()
		err := b.store.Update(b.ctx, func(w store.Writer) error { return w.Delete(id) })
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.ErrorContains(t, err, id)
	})

	t.Run("NeverReusesSeq", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		first, second := NewMessage(), NewMessage()
		b.insert(t, first)
		b.update(t, func(w store.Writer) error { return w.Delete(first.ID) })
		b.insert(t, second)
		require.Equal(t, uint64(2), b.message(t, second.ID).Seq)
	})

	t.Run("FreesTheID", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })
		again := WithStatus(NewMessage(), domain.StatusPEND)
		again.ID = m.ID
		b.insert(t, again)
		require.Equal(t, domain.StatusPEND, b.message(t, m.ID).Status)
		require.Len(t, b.history(t, m.ID), 1, "the old history went with the old message")
	})
}
