package storetest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testInsert(t *testing.T, open Opener) {
	t.Run("StoresEveryField", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		parent := NewEOIOMessage("ORDERS_DE")
		m := NewOutboundMessage(parent, ReceiverWMS)
		next := At(90)
		m.Attempts, m.Crashes, m.Blacklisted = 2, 1, true
		m.Error, m.ErrorClass = "HTTP 503 from http://wms/in", domain.ErrorTransient
		m.Headers = map[string]string{"X-Env": "prod", "Content-Type": "text/plain; charset=utf-8"}
		m.NextAttemptAt = &next
		m.Node = "node-a"
		m.Status = domain.StatusWAIT
		want := m.Clone()
		want.Seq, want.Size = 1, int64(len(PayloadOf(m)))

		h := domain.HistoryEntry{At: At(1), Node: "node-a", Actor: "ops", Reason: "routed"}
		b.update(t, func(w store.Writer) error { return w.Insert(m, PayloadOf(m), h) })

		require.Equal(t, want, b.message(t, m.ID))
		require.Equal(t, PayloadOf(m), b.payload(t, m.ID))
		h.To = domain.StatusWAIT
		require.Equal(t, []domain.HistoryEntry{h}, b.history(t, m.ID))
	})

	t.Run("AssignsIncreasingSeqPerQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		// EO queues: increasing; their numbers may come from one sequence
		// that several queues share (§14), so they may have gaps.
		a1, a2, a3 := NewMessage(), NewMessage(), NewMessage()
		q2 := domain.EOInboundQueue(domain.RoleCentral, 1)
		c1, c2 := InQueue(NewMessage(), q2), InQueue(NewMessage(), q2)
		b.insert(t, a1, c1)
		b.insert(t, a2, c2, a3)
		seqs := func(msgs ...*domain.Message) []uint64 {
			var out []uint64
			for _, m := range msgs {
				out = append(out, b.message(t, m.ID).Seq)
			}
			return out
		}
		as, cs := seqs(a1, a2, a3), seqs(c1, c2)
		require.True(t, as[0] > 0 && as[0] < as[1] && as[1] < as[2], "queue 1 in the order sent: %v", as)
		require.True(t, cs[0] > 0 && cs[0] < cs[1], "queue 2 in the order sent: %v", cs)
		require.Equal(t, as[2], b.queue(t, a1.Queue).LastSeq)
		require.Equal(t, cs[1], b.queue(t, q2).LastSeq)

		// EOIO queues: 1, 2, 3 — their order is the queue's.
		e1, e2, e3 := NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS")
		other := NewEOIOMessage("INVOICES")
		b.insert(t, e1, other)
		b.insert(t, e2, e3)
		require.Equal(t, []uint64{1, 2, 3}, seqs(e1, e2, e3))
		require.Equal(t, []uint64{1}, seqs(other))
		require.Equal(t, uint64(3), b.queue(t, e1.Queue).LastSeq)
	})

	t.Run("PendGetsSeqWhenItLeavesPend", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		first, pend, second := NewMessage(), WithStatus(NewMessage(), domain.StatusPEND), NewMessage()
		b.insert(t, first, pend, second)
		require.Equal(t, uint64(0), b.message(t, pend.ID).Seq, "a PEND message has no seq")
		require.Equal(t, uint64(2), b.message(t, second.ID).Seq, "PEND does not use up a seq")

		committed := b.move(t, pend.ID, domain.StatusPEND, domain.StatusTBDL)
		require.Equal(t, uint64(3), committed.Seq, "commit order is queue order")
		require.Equal(t, uint64(3), b.message(t, pend.ID).Seq)
		require.Equal(t, uint64(3), b.queue(t, first.Queue).LastSeq)
		require.Equal(t, idsOf(first, second, pend), b.queueIDs(t, first.Queue, store.QueueMessagesParams{}))
	})

	t.Run("SetsSizeFromPayload", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		m.Size = 999
		b.insert(t, m)
		require.Equal(t, int64(len(PayloadOf(m))), b.message(t, m.ID).Size)
	})

	t.Run("PayloadIsByteExact", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		binary := make([]byte, 0, 3*256)
		for i := range 256 {
			binary = append(binary, byte(i), 0, byte(255-i))
		}
		large := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 64<<10)
		payloads := map[string][]byte{"binary": binary, "empty": {}, "nil": nil, "large": large, "utf8": []byte("Grüße ✓\n")}
		ids := map[string]string{}
		b.update(t, func(w store.Writer) error {
			for name, p := range payloads {
				m := NewMessage()
				ids[name] = m.ID
				if err := w.Insert(m, p, Entry("received")); err != nil {
					return err
				}
				got, err := w.Payload(m.ID)
				if err != nil {
					return err
				}
				if !bytes.Equal(got, p) {
					return fmt.Errorf("payload %s read back in its own transaction differs", name)
				}
			}
			return nil
		})
		for name, p := range payloads {
			got := b.payload(t, ids[name])
			require.Len(t, got, len(p), "payload %s", name)
			require.True(t, bytes.Equal(p, got), "payload %s differs", name)
			require.Equal(t, int64(len(p)), b.message(t, ids[name]).Size, "size of payload %s", name)
		}
	})

	t.Run("DuplicateIDIsConflict", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		dup := NewEOIOMessage("OTHER")
		dup.ID = m.ID
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			return w.Insert(dup, []byte("other"), Entry("received"))
		})
		require.ErrorIs(t, err, domain.ErrConflict)
		require.ErrorContains(t, err, m.ID)
		require.Equal(t, m.Queue, b.message(t, m.ID).Queue)
		require.Equal(t, PayloadOf(m), b.payload(t, m.ID))
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, b.counts(t, m.Queue))
		requireNoQueue(t, b, dup.Queue)
	})

	t.Run("CreatesQueueRecordFromFirstMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		in := NewEOIOMessage("ORDERS")
		out := NewOutboundMessage(NewMessage(), ReceiverARCHIVE)
		before := Now()
		b.insert(t, in, out)

		q := b.queue(t, in.Queue)
		require.Equal(t, in.Queue, q.Name)
		require.Equal(t, domain.EOIO, q.QoS)
		require.Equal(t, domain.Inbound, q.Stage)
		require.Empty(t, q.Receiver, "an inbound queue has no receiver")
		require.False(t, q.Stopped)
		requireRecent(t, q.CreatedAt, before)

		q = b.queue(t, out.Queue)
		require.Equal(t, domain.EO, q.QoS)
		require.Equal(t, domain.Outbound, q.Stage)
		require.Equal(t, ReceiverARCHIVE, q.Receiver)
	})

	t.Run("CountsPerStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.insert(t, NewMessage(), NewMessage(), WithStatus(NewMessage(), domain.StatusPEND),
			NotDelivered(NewMessage(), domain.ErrorPermanent), WithStatus(NewMessage(), domain.StatusDLVD))
		q := b.queue(t, NewMessage().Queue)
		require.Equal(t, map[domain.Status]int64{
			domain.StatusTBDL: 2, domain.StatusPEND: 1, domain.StatusNDLV: 1, domain.StatusDLVD: 1,
		}, q.Counts, "statuses without messages are absent")
	})

	t.Run("RefusesIncompleteMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		for name, spoil := range map[string]func(*domain.Message){
			"no id":     func(m *domain.Message) { m.ID = "" },
			"no queue":  func(m *domain.Message) { m.Queue = "" },
			"bad qos":   func(m *domain.Message) { m.QoS = "XO" },
			"no stage":  func(m *domain.Message) { m.Stage = "" },
			"no status": func(m *domain.Message) { m.Status = "" },
			"bad status": func(m *domain.Message) {
				m.Status = "DONE"
			},
		} {
			m := InQueue(NewMessage(), "XBTI9999")
			spoil(m)
			err := b.store.Update(b.ctx, func(w store.Writer) error {
				return w.Insert(m, PayloadOf(m), Entry("received"))
			})
			require.ErrorIs(t, err, domain.ErrInvalid, name)
		}
		requireNoQueue(t, b, "XBTI9999")
	})

	t.Run("FillsHistoryTime", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		before := Now()
		b.insert(t, m)
		h := b.history(t, m.ID)
		require.Len(t, h, 1)
		requireRecent(t, h[0].At, before)
		require.Empty(t, h[0].From)
		require.Equal(t, domain.StatusTBDL, h[0].To)
		require.Equal(t, "engine", h[0].Actor)
		require.Equal(t, "received", h[0].Reason)
	})

	t.Run("MissingMessageIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		id := domain.NewID()
		var errs [3]error
		b.view(t, func(r store.Reader) error {
			_, errs[0] = r.Message(id)
			_, errs[1] = r.Payload(id)
			_, errs[2] = r.History(id)
			return nil
		})
		for _, err := range errs {
			require.ErrorIs(t, err, domain.ErrNotFound)
			require.ErrorContains(t, err, id)
		}
	})
}

// requireNoQueue checks that a queue was never created.
func requireNoQueue(t *testing.T, b *testBundle, name string) {
	t.Helper()
	var err error
	b.view(t, func(r store.Reader) error {
		_, err = r.Queue(name)
		return nil
	})
	require.ErrorIs(t, err, domain.ErrNotFound, "queue %s", name)
}

// requireRecent checks that the store set a time of its own clock: between
// a minute before the test's `before` and a minute from now, which leaves
// room for a database server's clock.
func requireRecent(t *testing.T, got, before time.Time) {
	t.Helper()
	require.False(t, got.IsZero(), "time not set")
	require.True(t, got.After(before.Add(-time.Minute)) && got.Before(time.Now().Add(time.Minute)),
		"time %s is not around the test's time %s", got, before)
}
