package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// errRollback is what test functions return to make an Update fail.
var errRollback = errors.New("roll back on purpose")

func testTransaction(t *testing.T, open Opener) {
	t.Run("FailedUpdateLeavesNothingBehind", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		kept, gone := NewMessage(), NewMessage()
		b.insert(t, kept, gone)
		b.update(t, func(w store.Writer) error {
			return w.SetParam(domain.Param{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 4})
		})
		queueBefore := b.queue(t, kept.Queue)
		commits := b.store.Commits()

		fresh := InQueue(NewMessage(), "XBTI0007")
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			for _, m := range []*domain.Message{fresh, NewMessage(), WithStatus(NewMessage(), domain.StatusPEND)} {
				if err := w.Insert(m.Clone(), PayloadOf(m), Entry("received")); err != nil {
					return err
				}
			}
			steps := []func() error{
				func() error { _, err := w.Transition(tp(kept.ID, domain.StatusTBDL, domain.StatusDLNG)); return err },
				func() error { _, err := w.Transition(tp(kept.ID, domain.StatusDLNG, domain.StatusDLVD)); return err },
				func() error { return w.Delete(gone.ID) },
				func() error { return w.SetStopped(kept.Queue, true) },
				func() error { return w.SetParam(domain.Param{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 8}) },
				func() error { return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Value: 2}) },
				func() error {
					return w.AppendAudit(&domain.AuditEntry{Actor: "ops", Action: "resend", Result: domain.AuditOK})
				},
			}
			for i, step := range steps {
				if err := step(); err != nil {
					return fmt.Errorf("step %d: %w", i, err)
				}
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback, "Update returns fn's error")

		require.Equal(t, idsOf(kept, gone), b.ids(t, store.MessageFilter{}))
		require.Equal(t, domain.StatusTBDL, b.message(t, kept.ID).Status)
		require.Len(t, b.history(t, kept.ID), 1)
		require.Equal(t, queueBefore, b.queue(t, kept.Queue), "counters, last seq and stopped unchanged")
		require.Equal(t, idsOf(kept, gone), b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}}))
		require.Empty(t, b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusDLVD, domain.StatusPEND, domain.StatusDLNG}}))
		requireNoQueue(t, b, fresh.Queue)
		var params []domain.Param
		var audit []*domain.AuditEntry
		b.view(t, func(r store.Reader) error {
			if err := r.Params(func(p domain.Param) error { params = append(params, p); return nil }); err != nil {
				return err
			}
			return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error { audit = append(audit, e); return nil })
		})
		require.Equal(t, []domain.Param{{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 4}}, params)
		require.Empty(t, audit)
		require.Equal(t, commits, b.store.Commits(), "a failed Update commits nothing")
	})

	t.Run("UpdateSeesItsOwnWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		var seen struct {
			status  domain.Status
			payload []byte
			history int
			listed  []string
			queued  []string
			head    string
			counts  map[domain.Status]int64
		}
		b.update(t, func(w store.Writer) error {
			seen.listed, seen.queued = nil, nil
			if err := w.Insert(m.Clone(), PayloadOf(m), Entry("received")); err != nil {
				return err
			}
			if _, err := w.Transition(tp(m.ID, domain.StatusTBDL, domain.StatusDLNG)); err != nil {
				return err
			}
			got, err := w.Message(m.ID)
			if err != nil {
				return err
			}
			seen.status = got.Status
			if seen.payload, err = w.Payload(m.ID); err != nil {
				return err
			}
			h, err := w.History(m.ID)
			if err != nil {
				return err
			}
			seen.history = len(h)
			if err := w.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}, func(m *domain.Message) error {
				seen.listed = append(seen.listed, m.ID)
				return nil
			}); err != nil {
				return err
			}
			if err := w.QueueMessages(m.Queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
				seen.queued = append(seen.queued, m.ID)
				return nil
			}); err != nil {
				return err
			}
			head, err := w.Head(m.Queue)
			if err != nil || head == nil {
				return fmt.Errorf("head: %v, %w", head, err)
			}
			seen.head = head.ID
			q, err := w.Queue(m.Queue)
			if err != nil {
				return err
			}
			seen.counts = q.Counts
			return nil
		})
		require.Equal(t, domain.StatusDLNG, seen.status)
		require.Equal(t, PayloadOf(m), seen.payload)
		require.Equal(t, 2, seen.history)
		require.Equal(t, idsOf(m), seen.listed)
		require.Equal(t, idsOf(m), seen.queued)
		require.Equal(t, m.ID, seen.head)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLNG: 1}, nonZero(seen.counts))
	})

	t.Run("CommitsCountsEachUpdateOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		c0 := b.store.Commits()
		b.insert(t, NewMessage())
		require.Equal(t, c0+1, b.store.Commits(), "one Update, one commit")

		msgs := make([]*domain.Message, 100)
		for i := range msgs {
			msgs[i] = NewMessage()
		}
		b.insert(t, msgs...)
		require.Equal(t, c0+2, b.store.Commits(), "an Update of 100 inserts is one commit")

		b.view(t, func(store.Reader) error { return nil })
		require.Equal(t, c0+2, b.store.Commits(), "a View commits nothing")
	})

	t.Run("CanceledContextRunsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		ctx, cancel := context.WithCancel(b.ctx)
		cancel()
		ran := false
		err := b.store.Update(ctx, func(w store.Writer) error {
			ran = true
			return w.Insert(NewMessage(), nil, Entry("received"))
		})
		require.ErrorIs(t, err, context.Canceled)
		err = b.store.View(ctx, func(store.Reader) error { ran = true; return nil })
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, ran)
		require.Empty(t, b.ids(t, store.MessageFilter{}))
	})

	t.Run("WalkMayChangeWhatItWalks", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		// Enough messages that the indexes span many pages.
		var msgs []*domain.Message
		for i := range 600 {
			m := NewMessage()
			if i%3 == 0 {
				m = NotDelivered(m, domain.ErrorTransient)
			}
			msgs = append(msgs, m)
		}
		b.insert(t, msgs...)
		var resent, delivered, stopped []string
		b.update(t, func(w store.Writer) error {
			resent, delivered, stopped = nil, nil, nil
			// A bulk action that moves each message it walks, some of them
			// to a status the walk selects too: NDLV to TBDL, TBDL to DLNG.
			err := w.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV, domain.StatusTBDL}}, func(m *domain.Message) error {
				resent = append(resent, m.ID)
				to := domain.StatusDLNG
				if m.Status == domain.StatusNDLV {
					to = domain.StatusTBDL
				}
				_, err := w.Transition(tp(m.ID, m.Status, to))
				return err
			})
			if err != nil {
				return err
			}
			// The same on the open queue order, which loses DLVD messages.
			err = w.QueueMessages(msgs[0].Queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
				delivered = append(delivered, m.ID)
				to := domain.StatusDLVD
				if m.Status == domain.StatusTBDL {
					to = domain.StatusDLNG
				}
				_, err := w.Transition(tp(m.ID, m.Status, to))
				return err
			})
			if err != nil {
				return err
			}
			return w.Queues("", func(q *store.QueueRecord) error {
				stopped = append(stopped, q.Name)
				return w.SetStopped(q.Name, true)
			})
		})
		require.Equal(t, idsOf(msgs...), resent, "each message once, in id order")
		require.Equal(t, idsOf(msgs...), delivered, "each message once, in seq order")
		require.Equal(t, []string{msgs[0].Queue}, stopped)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLNG: 200, domain.StatusDLVD: 400}, b.counts(t, msgs[0].Queue))
		require.True(t, b.queue(t, msgs[0].Queue).Stopped)
		requireConsistent(t, b)
	})
}

// tp is the TransitionParams of a plain move by the engine.
func tp(id string, from, to domain.Status) store.TransitionParams {
	return store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, History: Entry(fmt.Sprintf("%s to %s", from, to))}
}
