package storetest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testCopies(t *testing.T, open Opener) {
	t.Run("ReturnedMessageIsACopy", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		next := At(10)
		m.NextAttemptAt = &next
		b.insert(t, m)
		want := b.message(t, m.ID)

		got := b.message(t, m.ID)
		got.Status = domain.StatusFAIL
		got.Headers["Content-Type"] = "changed"
		got.Receivers[0] = "changed"
		*got.NextAttemptAt = At(99)
		require.Equal(t, want, b.message(t, m.ID))

		b.view(t, func(r store.Reader) error {
			return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
				m.Headers["Content-Type"] = "changed in a walk"
				m.Status = domain.StatusFAIL
				return nil
			})
		})
		require.Equal(t, want, b.message(t, m.ID))
	})

	t.Run("TransitionResultIsACopy", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		got := b.move(t, m.ID, domain.StatusTBDL, domain.StatusDLNG)
		want := got.Clone()
		got.Headers["Content-Type"] = "changed"
		got.Status = domain.StatusFAIL
		require.Equal(t, want, b.message(t, m.ID))
	})

	t.Run("PayloadIsACopy", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		payloads := map[string][]byte{}
		b.update(t, func(w store.Writer) error {
			for _, size := range []int{0, 10, 1000, 10000, 100000} {
				m := NewMessage()
				payloads[m.ID] = bytes.Repeat([]byte{'p'}, size)
				if err := w.Insert(m, payloads[m.ID], Entry("received")); err != nil {
					return err
				}
			}
			return nil
		})
		for id, want := range payloads {
			got := b.payload(t, id)
			for i := range got {
				got[i] = 'X'
			}
			require.Equal(t, want, b.payload(t, id))
		}
	})

	t.Run("QueueRecordIsACopy", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		q := b.queue(t, m.Queue)
		q.Counts[domain.StatusTBDL] = 42
		q.Stopped = true
		q = b.queue(t, m.Queue)
		require.Equal(t, int64(1), q.Counts[domain.StatusTBDL])
		require.False(t, q.Stopped)
	})

	t.Run("InsertCopiesItsInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		payload := PayloadOf(m)
		b.update(t, func(w store.Writer) error {
			buf := bytes.Clone(payload)
			in := m.Clone()
			if err := w.Insert(in, buf, Entry("received")); err != nil {
				return err
			}
			// A producer reuses its buffers before the transaction commits.
			for i := range buf {
				buf[i] = 0
			}
			in.Headers["Content-Type"] = "changed"
			in.Sender = "changed"
			return nil
		})
		require.Equal(t, payload, b.payload(t, m.ID))
		got := b.message(t, m.ID)
		require.Equal(t, SenderERP, got.Sender)
		require.Equal(t, "application/xml", got.Headers["Content-Type"])
	})

	t.Run("ValuesOutliveTheirTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		var (
			msg     *domain.Message
			payload []byte
			history []domain.HistoryEntry
			queue   *store.QueueRecord
		)
		b.view(t, func(r store.Reader) error {
			var err error
			if msg, err = r.Message(m.ID); err != nil {
				return err
			}
			if payload, err = r.Payload(m.ID); err != nil {
				return err
			}
			if history, err = r.History(m.ID); err != nil {
				return err
			}
			queue, err = r.Queue(m.Queue)
			return err
		})
		// Grow the store well past its first size, and drop the message,
		// so that memory a store may have handed out is reused or unmapped.
		big := bytes.Repeat([]byte{0xAB}, 1<<20)
		for range 4 {
			b.update(t, func(w store.Writer) error {
				return w.Insert(NewMessage(), big, Entry("received"))
			})
		}
		b.update(t, func(w store.Writer) error { return w.Delete(m.ID) })

		require.Equal(t, m.ID, msg.ID)
		require.Equal(t, m.Headers, msg.Headers)
		require.Equal(t, PayloadOf(m), payload)
		require.Len(t, history, 1)
		require.Equal(t, "received", history[0].Reason)
		require.Equal(t, m.Queue, queue.Name)
		require.Equal(t, int64(1), queue.Counts[domain.StatusTBDL])
	})
}
