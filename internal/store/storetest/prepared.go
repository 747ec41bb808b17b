package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testPrepared specifies what the stores keep of a transactional send's
// check-back (§9) and the shared rules of its end: store.CommitPrepared,
// store.RollbackPrepared and store.RecordCheck, over each store's Writer.
func testPrepared(t *testing.T, open Opener) {
	node := store.Node{ID: "N1", Incarnation: 1}

	t.Run("CheckStateIsStoredCountedAndFiltered", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		stuck, waiting, sent := Prepared(NewMessage()), Prepared(NewMessage()), NewMessage()
		b.insert(t, stuck, waiting, sent)
		at := At(3)
		got, err := b.transition(t, store.TransitionParams{
			ID: stuck.ID, From: []domain.Status{domain.StatusPEND}, To: domain.StatusPEND, History: Entry("asked"),
			Update: func(m *domain.Message) {
				m.Checks, m.LastCheckAt, m.LastAnswer, m.Stuck = 2, &at, "timeout", true
			},
		})
		require.NoError(t, err)
		require.Equal(t, 2, got.Checks)
		require.Equal(t, at, *got.LastCheckAt)
		require.Equal(t, "timeout", got.LastAnswer)
		require.True(t, got.Stuck)
		require.Equal(t, got, b.message(t, stuck.ID), "the check-back's fields are stored")

		q := b.queue(t, stuck.Queue)
		require.Equal(t, int64(1), q.Stuck, "the queue counts its stuck transaction")
		require.Equal(t, int64(2), q.Counts[domain.StatusPEND], "a stuck message is PEND")

		yes, no := true, false
		require.Equal(t, idsOf(stuck), b.ids(t, store.MessageFilter{Stuck: &yes}))
		require.Equal(t, idsOf(waiting), b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}, Stuck: &no}))
		require.Equal(t, idsOf(waiting, sent), b.ids(t, store.MessageFilter{Stuck: &no}), "only PEND messages can be stuck")
		requireConsistent(t, b)
	})

	t.Run("CommitPreparedAssignsSeqAtCommitAndClearsStuck", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p, sent := Prepared(NewMessage()), NewMessage()
		b.insert(t, p, sent)
		b.markChecked(t, p.ID, func(m *domain.Message) { m.Checks, m.Stuck = 10, true })
		var got *domain.Message
		b.update(t, func(w store.Writer) error {
			var err error
			got, err = store.CommitPrepared(w, p.ID, Entry("tx.commit by ops"), nil)
			return err
		})
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.Equal(t, uint64(2), got.Seq, "seq is assigned at commit: after the message sent meanwhile")
		require.False(t, got.Stuck, "a committed message is no longer stuck")
		require.Equal(t, 10, got.Checks, "it keeps its count")
		require.Equal(t, got, b.message(t, p.ID))
		require.Zero(t, b.queue(t, p.Queue).Stuck)
		hist := b.history(t, p.ID)
		require.Equal(t, domain.StatusPEND, hist[len(hist)-1].From)
		require.Equal(t, domain.StatusTBDL, hist[len(hist)-1].To)
		requireConsistent(t, b)

		err := b.store.Update(b.ctx, func(w store.Writer) error {
			_, err := store.CommitPrepared(w, p.ID, Entry("again"), nil)
			return err
		})
		require.ErrorIs(t, err, domain.ErrConflict, "a compare-and-set on PEND")
	})

	t.Run("CommitPreparedHoldsInABlockedEOIOQueue", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		head := NotDelivered(NewEOIOMessage("ORDERS"), domain.ErrorPermanent)
		p := Prepared(NewEOIOMessage("ORDERS"))
		b.insert(t, head, p)
		var got *domain.Message
		b.update(t, func(w store.Writer) error {
			var err error
			got, err = store.CommitPrepared(w, p.ID, Entry("committed"), nil)
			return err
		})
		require.Equal(t, domain.StatusHOLD, got.Status, "held behind the NDLV head, in commit order")
		require.Equal(t, uint64(2), got.Seq)
		hist := b.history(t, p.ID)
		require.Equal(t, domain.StatusTBDL, hist[len(hist)-2].To)
		require.Equal(t, domain.StatusHOLD, hist[len(hist)-1].To)
		require.Contains(t, hist[len(hist)-1].Reason, "held behind "+head.ID)
		requireConsistent(t, b)
	})

	t.Run("RollbackPreparedDeletes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p, sent := Prepared(NewMessage()), NewMessage()
		b.insert(t, p, sent)
		b.markChecked(t, p.ID, func(m *domain.Message) { m.Stuck = true })
		var gone *domain.Message
		b.update(t, func(w store.Writer) error {
			var err error
			gone, err = store.RollbackPrepared(w, p.ID)
			return err
		})
		require.Equal(t, p.ID, gone.ID, "the message as it was")
		require.Equal(t, idsOf(sent), b.ids(t, store.MessageFilter{}))
		require.Zero(t, b.queue(t, p.Queue).Stuck)
		requireConsistent(t, b)

		err := b.store.Update(b.ctx, func(w store.Writer) error {
			_, err := store.RollbackPrepared(w, sent.ID)
			return err
		})
		require.ErrorIs(t, err, domain.ErrConflict, "only a PEND message is rolled back")
	})

	t.Run("RecordCheckCountsUnansweredChecksUntilStuck", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p := Prepared(NewMessage())
		b.insert(t, p)
		for n := 1; n <= 3; n++ {
			claimed := b.markChecked(t, p.ID, nil)
			got := b.recordCheck(t, store.CheckOutcome{ID: p.ID, CheckedAt: *claimed.LastCheckAt, Kind: store.CheckUnanswered,
				Answer: "HTTP 500", Detail: "POST http://erp/check: HTTP 500"}, 3)
			require.Equal(t, domain.StatusPEND, got.Status)
			require.Equal(t, n, got.Checks)
			require.Equal(t, "HTTP 500", got.LastAnswer)
			require.Equal(t, n == 3, got.Stuck, "stuck at tx.max_checks")
			require.Equal(t, got, b.message(t, p.ID))
		}
		hist := b.history(t, p.ID)
		last := hist[len(hist)-1]
		require.Equal(t, domain.StatusPEND, last.From)
		require.Equal(t, domain.StatusPEND, last.To)
		require.Equal(t, "engine", last.Actor)
		require.Equal(t, "N1", last.Node)
		require.Equal(t, "check-back 3 of 3 unanswered (HTTP 500): POST http://erp/check: HTTP 500; "+
			"stuck: it stays PEND until an operator commits or rolls it back", last.Reason)
		require.Equal(t, int64(1), b.queue(t, p.Queue).Stuck)
		requireConsistent(t, b)
	})

	t.Run("RecordCheckGivesUpAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p := Prepared(NewMessage())
		b.insert(t, p)
		claimed := b.markChecked(t, p.ID, nil)
		got := b.recordCheck(t, store.CheckOutcome{ID: p.ID, CheckedAt: *claimed.LastCheckAt, Kind: store.CheckUnanswered,
			Answer: "no check_url", Detail: "nobody to ask", GiveUp: true}, 10)
		require.True(t, got.Stuck)
		require.Equal(t, 1, got.Checks)
	})

	t.Run("RecordCheckCommits", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p := Prepared(NewEOIOMessage("ORDERS"))
		b.insert(t, p)
		claimed := b.markChecked(t, p.ID, func(m *domain.Message) { m.Checks, m.LastAnswer = 1, "unknown" })
		got := b.recordCheck(t, store.CheckOutcome{ID: p.ID, CheckedAt: *claimed.LastCheckAt, Kind: store.CheckCommit,
			Answer: "commit", Detail: "POST http://shop/check"}, 10)
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.Equal(t, uint64(1), got.Seq)
		require.Equal(t, 2, got.Checks)
		require.Equal(t, "commit", got.LastAnswer)
		hist := b.history(t, p.ID)
		require.Equal(t, "committed by check-back 2: sender SHOP answered commit (POST http://shop/check)", hist[len(hist)-1].Reason)
		requireConsistent(t, b)
	})

	t.Run("RecordCheckRollsBackIntoTheAuditLog", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p := Prepared(NewMessage())
		b.insert(t, p)
		claimed := b.markChecked(t, p.ID, nil)
		got := b.recordCheck(t, store.CheckOutcome{ID: p.ID, CheckedAt: *claimed.LastCheckAt, Kind: store.CheckRollback,
			Answer: "rollback", Detail: "POST http://erp/check"}, 10)
		require.Equal(t, p.ID, got.ID)
		require.Equal(t, "rollback", got.LastAnswer)
		require.Empty(t, b.ids(t, store.MessageFilter{}), "the message is deleted")
		var audit []*domain.AuditEntry
		b.view(t, func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
				audit = append(audit, e)
				return nil
			})
		})
		require.Len(t, audit, 1)
		require.Equal(t, "engine", audit[0].Actor)
		require.Equal(t, "tx.rollback", audit[0].Action)
		require.Equal(t, []string{p.ID}, audit[0].Targets)
		require.Equal(t, domain.AuditOK, audit[0].Result)
		require.Contains(t, audit[0].Detail, "rolled back by check-back 1: sender ERP answered rollback (POST http://erp/check)")
		require.Contains(t, audit[0].Detail, "queue "+p.Queue+", interface OrderCreate")
		requireConsistent(t, b)
	})

	t.Run("RecordCheckIsACompareAndSetOnPENDAndTheClaim", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		p, committed := Prepared(NewMessage()), Prepared(NewMessage())
		b.insert(t, p, committed)
		first := b.markChecked(t, p.ID, nil)
		second := b.markChecked(t, p.ID, func(m *domain.Message) {
			at := first.LastCheckAt.Add(time.Second)
			m.LastCheckAt = &at
		})
		unanswered := func(id string, at time.Time) store.CheckOutcome {
			return store.CheckOutcome{ID: id, CheckedAt: at, Kind: store.CheckUnanswered, Answer: "unknown"}
		}
		conflict := func(o store.CheckOutcome) error {
			return b.store.Update(b.ctx, func(w store.Writer) error {
				_, err := store.RecordCheck(w, node, o, 10, Now())
				return err
			})
		}
		require.ErrorIs(t, conflict(unanswered(p.ID, *first.LastCheckAt)), domain.ErrConflict, "claimed again since")
		require.Zero(t, b.message(t, p.ID).Checks)
		b.recordCheck(t, unanswered(p.ID, *second.LastCheckAt), 10)

		c := b.markChecked(t, committed.ID, nil)
		b.update(t, func(w store.Writer) error {
			_, err := store.CommitPrepared(w, committed.ID, Entry("tx.commit by producer"), nil)
			return err
		})
		err := conflict(store.CheckOutcome{ID: committed.ID, CheckedAt: *c.LastCheckAt, Kind: store.CheckRollback})
		require.ErrorIs(t, err, domain.ErrConflict, "the producer's commit won")
		require.Equal(t, domain.StatusTBDL, b.message(t, committed.ID).Status)
		require.ErrorIs(t, conflict(unanswered(domain.NewID(), Now())), domain.ErrConflict, "a message that is gone")
	})
}

// markChecked stands for a claim of a check-back: it sets the message's
// LastCheckAt to now (and applies update), with a PEND→PEND change.
func (b *testBundle) markChecked(t *testing.T, id string, update func(*domain.Message)) *domain.Message {
	t.Helper()
	m, err := b.transition(t, store.TransitionParams{
		ID: id, From: []domain.Status{domain.StatusPEND}, To: domain.StatusPEND, History: Entry("claimed for a check"),
		Update: func(m *domain.Message) {
			at := Now()
			m.LastCheckAt = &at
			if update != nil {
				update(m)
			}
		},
	})
	require.NoError(t, err)
	return m
}

// recordCheck applies one check-back outcome of node N1, which must succeed.
func (b *testBundle) recordCheck(t *testing.T, o store.CheckOutcome, maxChecks int) *domain.Message {
	t.Helper()
	var got *domain.Message
	b.update(t, func(w store.Writer) error {
		var err error
		got, err = store.RecordCheck(w, store.Node{ID: "N1", Incarnation: 1}, o, maxChecks, Now())
		return err
	})
	return got
}
