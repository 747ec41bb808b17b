package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testAuditRetention: DeleteAuditBefore deletes the entries older than its
// cutoff, oldest first, at most max per call, and nothing else (§6,
// engine.retention.audit); store.PurgeAudit deletes them all in batches.
func testAuditRetention(t *testing.T, open Opener) {
	appendAt := func(t *testing.T, b *testBundle, minutes ...int) {
		t.Helper()
		b.update(t, func(w store.Writer) error {
			for _, m := range minutes {
				if err := w.AppendAudit(&domain.AuditEntry{At: At(m), Actor: "ops", Action: "queue.stop",
					Targets: []string{"XBTI0000"}, Result: domain.AuditOK}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	minutes := func(t *testing.T, b *testBundle) []int {
		t.Helper()
		out := []int{}
		b.view(t, func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
				out = append(out, int(e.At.Sub(At(0)).Minutes()))
				return nil
			})
		})
		return out
	}

	t.Run("DeletesOlderThanTheCutoff", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		appendAt(t, b, 0, 1, 2, 3, 4, 5)
		var n int
		b.update(t, func(w store.Writer) error {
			var err error
			n, err = w.DeleteAuditBefore(At(3), 100)
			return err
		})
		require.Equal(t, 3, n)
		require.Equal(t, []int{3, 4, 5}, minutes(t, b), "an entry at the cutoff is kept")

		b.update(t, func(w store.Writer) error {
			var err error
			n, err = w.DeleteAuditBefore(At(0), 100)
			return err
		})
		require.Zero(t, n, "nothing older: nothing deleted")
	})

	t.Run("AtMostMaxOldestFirst", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		appendAt(t, b, 0, 1, 2, 3, 4)
		var n int
		b.update(t, func(w store.Writer) error {
			var err error
			n, err = w.DeleteAuditBefore(At(10), 2)
			return err
		})
		require.Equal(t, 2, n)
		require.Equal(t, []int{2, 3, 4}, minutes(t, b))
	})

	t.Run("RolledBackWithItsTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		appendAt(t, b, 0, 1)
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if _, err := w.DeleteAuditBefore(At(10), 100); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.Equal(t, []int{0, 1}, minutes(t, b))
	})

	t.Run("PurgeAuditInBatches", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		old := make([]int, 2500)
		appendAt(t, b, old...) // all at minute 0
		appendAt(t, b, 5)
		n, err := store.PurgeAudit(b.ctx, b.store, At(1))
		require.NoError(t, err)
		require.Equal(t, 2500, n)
		require.Equal(t, []int{5}, minutes(t, b))
		// New entries keep counting up: seq is not reused.
		b.update(t, func(w store.Writer) error {
			return w.AppendAudit(&domain.AuditEntry{At: At(6), Actor: "ops", Action: "queue.start", Result: domain.AuditOK})
		})
		var seqs []uint64
		b.view(t, func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
				seqs = append(seqs, e.Seq)
				return nil
			})
		})
		require.Len(t, seqs, 2)
		require.Greater(t, seqs[1], seqs[0])
	})
}
