package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testTransition(t *testing.T, open Opener) {
	t.Run("ChangesStatusAndAppendsHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		h := domain.HistoryEntry{At: At(5), Node: "node-b", Actor: "engine", Reason: "delivery starts"}
		got, err := b.transition(t, store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG, History: h,
		})
		require.NoError(t, err)
		require.Equal(t, domain.StatusDLNG, got.Status)
		require.Equal(t, got, b.message(t, m.ID), "the returned message is the one stored")

		hist := b.history(t, m.ID)
		require.Len(t, hist, 2)
		h.From, h.To = domain.StatusTBDL, domain.StatusDLNG
		require.Equal(t, h, hist[1])
		require.Equal(t, domain.StatusTBDL, hist[0].To)
	})

	t.Run("FillsHistoryTimeAndUpdatedAt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		m.CreatedAt, m.UpdatedAt = At(0), At(0)
		b.insert(t, m)
		before := Now()
		got := b.move(t, m.ID, domain.StatusTBDL, domain.StatusDLNG)
		hist := b.history(t, m.ID)
		requireRecent(t, hist[1].At, before)
		require.Equal(t, hist[1].At, got.UpdatedAt, "updated_at is the time of the last change")
		require.Equal(t, At(0), got.CreatedAt)
	})

	t.Run("AcceptsAnyStatusOfFrom", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusWAIT)
		b.insert(t, m)
		got, err := b.transition(t, store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, To: domain.StatusTBDL, History: Entry("retry now"),
		})
		require.NoError(t, err)
		require.Equal(t, domain.StatusTBDL, got.Status)
	})

	t.Run("AppliesUpdate", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusDLNG)
		b.insert(t, m)
		next := At(30)
		got, err := b.transition(t, store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusWAIT, History: Entry("transient error"),
			Update: func(m *domain.Message) {
				m.Attempts++
				m.Crashes = 1
				m.Error, m.ErrorClass = "HTTP 503", domain.ErrorTransient
				m.NextAttemptAt = &next
				m.Node = ""
				m.Headers["X-Retry"] = "1"
			},
		})
		require.NoError(t, err)
		stored := b.message(t, m.ID)
		require.Equal(t, got, stored)
		require.Equal(t, 1, stored.Attempts)
		require.Equal(t, 1, stored.Crashes)
		require.Equal(t, "HTTP 503", stored.Error)
		require.Equal(t, domain.ErrorTransient, stored.ErrorClass)
		require.Equal(t, &next, stored.NextAttemptAt)
		require.Equal(t, "1", stored.Headers["X-Retry"])
		require.Equal(t, uint64(1), stored.Seq)
	})

	t.Run("WrongStatusIsConflictNamingCurrentStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusDLVD)
		b.insert(t, m)
		before := b.message(t, m.ID)
		_, err := b.transition(t, store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, To: domain.StatusTBDL, History: Entry("resend"),
			Update: func(m *domain.Message) { m.Attempts = 0 },
		})
		require.ErrorIs(t, err, domain.ErrConflict)
		require.ErrorContains(t, err, m.ID)
		require.ErrorContains(t, err, "DLVD")
		require.Equal(t, before, b.message(t, m.ID), "a lost compare-and-set changes nothing")
		require.Len(t, b.history(t, m.ID), 1)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1}, b.counts(t, m.Queue))
	})

	t.Run("MissingMessageIsNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		id := domain.NewID()
		_, err := b.transition(t, store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG})
		require.ErrorIs(t, err, domain.ErrNotFound)
		require.ErrorContains(t, err, id)
	})

	t.Run("KeepsCountersAndStatusIndexInStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m, other := NewMessage(), NewMessage()
		b.insert(t, m, other)
		b.move(t, m.ID, domain.StatusTBDL, domain.StatusDLNG)

		q := b.queue(t, m.Queue)
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1, domain.StatusDLNG: 1}, q.Counts)
		require.Equal(t, idsOf(other), b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}}))
		require.Equal(t, idsOf(m), b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}))

		b.move(t, other.ID, domain.StatusTBDL, domain.StatusDLNG)
		q = b.queue(t, m.Queue)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLNG: 2}, q.Counts, "a status that drops to zero is absent")
		require.Empty(t, b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}}))
	})

	t.Run("FinalStatusLeavesOpenOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		done, failed, stays := NewMessage(), WithStatus(NewMessage(), domain.StatusWAIT), NewMessage()
		b.insert(t, done, failed, stays)
		b.move(t, done.ID, domain.StatusTBDL, domain.StatusDLNG)
		require.Equal(t, idsOf(done, failed, stays), b.queueIDs(t, done.Queue, store.QueueMessagesParams{Open: true}))
		b.move(t, done.ID, domain.StatusDLNG, domain.StatusDLVD)
		b.move(t, failed.ID, domain.StatusWAIT, domain.StatusFAIL)
		require.Equal(t, idsOf(stays), b.queueIDs(t, done.Queue, store.QueueMessagesParams{Open: true}))
		require.Equal(t, idsOf(done, failed, stays), b.queueIDs(t, done.Queue, store.QueueMessagesParams{}))
	})

	t.Run("RefusesUpdateThatMovesTheMessage", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		for name, spoil := range map[string]func(*domain.Message){
			"queue":  func(m *domain.Message) { m.Queue = "XBTI0042" },
			"seq":    func(m *domain.Message) { m.Seq = 42 },
			"status": func(m *domain.Message) { m.Status = domain.StatusDLVD },
			"id":     func(m *domain.Message) { m.ID = domain.NewID() },
		} {
			_, err := b.transition(t, store.TransitionParams{
				ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG, Update: spoil, History: Entry("bad update"),
			})
			require.Error(t, err, name)
		}
		require.Equal(t, m.Queue, b.message(t, m.ID).Queue)
		require.Equal(t, domain.StatusTBDL, b.message(t, m.ID).Status)
		requireNoQueue(t, b, "XBTI0042")
	})

	t.Run("RefusesUnknownStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		_, err := b.transition(t, store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: "DONE"})
		require.ErrorIs(t, err, domain.ErrInvalid)
		require.Equal(t, domain.StatusTBDL, b.message(t, m.ID).Status)
	})

	t.Run("RefusesReturnToPend", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		_, err := b.transition(t, store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusPEND})
		require.ErrorIs(t, err, domain.ErrInvalid)
		require.Equal(t, domain.StatusTBDL, b.message(t, m.ID).Status)
	})

	t.Run("PendToPendRecordsACheck", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusPEND)
		b.insert(t, m)
		got, err := b.transition(t, store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusPEND}, To: domain.StatusPEND,
			History: domain.HistoryEntry{Actor: "engine", Reason: "tx check: unknown"},
		})
		require.NoError(t, err)
		require.Equal(t, uint64(0), got.Seq, "a message still PEND has no seq")
		require.Len(t, b.history(t, m.ID), 2)
		require.Equal(t, map[domain.Status]int64{domain.StatusPEND: 1}, b.counts(t, m.Queue))
		require.Empty(t, b.queueIDs(t, m.Queue, store.QueueMessagesParams{}))
	})
}
