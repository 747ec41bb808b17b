package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testAudit(t *testing.T, open Opener) {
	entry := func(minute int, actor, action string) *domain.AuditEntry {
		return &domain.AuditEntry{
			At: At(minute), Actor: actor, Source: "127.0.0.1:53122", Action: action,
			Targets: []string{domain.NewID()}, Result: domain.AuditOK,
		}
	}
	list := func(t *testing.T, b *testBundle, f store.AuditFilter) []*domain.AuditEntry {
		t.Helper()
		out := []*domain.AuditEntry{}
		b.view(t, func(r store.Reader) error {
			return r.Audit(f, func(e *domain.AuditEntry) error {
				out = append(out, e)
				return nil
			})
		})
		return out
	}
	// appendAll appends each entry in an Update of its own.
	appendAll := func(t *testing.T, b *testBundle, entries ...*domain.AuditEntry) {
		t.Helper()
		for _, e := range entries {
			b.update(t, func(w store.Writer) error { return w.AppendAudit(e) })
		}
	}

	t.Run("AssignsIncreasingSeq", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		first := entry(0, "ops", "message resend")
		first.Result, first.Detail = domain.AuditConflict, "status is DLVD"
		second, third := entry(1, "ops", "queue stop"), entry(2, "admin", "tune set")
		appendAll(t, b, first)
		b.update(t, func(w store.Writer) error {
			if err := w.AppendAudit(second); err != nil {
				return err
			}
			return w.AppendAudit(third)
		})
		require.Positive(t, first.Seq)
		require.Greater(t, second.Seq, first.Seq)
		require.Greater(t, third.Seq, second.Seq)
		require.Equal(t, []*domain.AuditEntry{first, second, third}, list(t, b, store.AuditFilter{}), "oldest first, every field kept")
	})

	t.Run("FillsTime", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		e := &domain.AuditEntry{Actor: "ops", Action: "queue start", Result: domain.AuditOK}
		before := Now()
		appendAll(t, b, e)
		got := list(t, b, store.AuditFilter{})
		require.Len(t, got, 1)
		requireRecent(t, got[0].At, before)
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		e := []*domain.AuditEntry{
			entry(0, "ops", "message resend"),
			entry(1, "admin", "tune set"),
			entry(2, "ops", "message fail"),
			entry(3, "ops", "queue stop"),
			entry(4, "admin", "purge"),
		}
		appendAll(t, b, e...)
		for _, tc := range []struct {
			name string
			f    store.AuditFilter
			want []*domain.AuditEntry
		}{
			{"all", store.AuditFilter{}, e},
			{"since is inclusive", store.AuditFilter{Since: At(2)}, e[2:]},
			{"actor", store.AuditFilter{Actor: "admin"}, []*domain.AuditEntry{e[1], e[4]}},
			{"after seq", store.AuditFilter{AfterSeq: e[1].Seq}, e[2:]},
			{"limit", store.AuditFilter{Limit: 2}, e[:2]},
			{"actor and limit", store.AuditFilter{Actor: "ops", Limit: 2}, []*domain.AuditEntry{e[0], e[2]}},
			{"actor, since and after seq", store.AuditFilter{Actor: "ops", Since: At(1), AfterSeq: e[2].Seq}, []*domain.AuditEntry{e[3]}},
			{"no such actor", store.AuditFilter{Actor: "nobody"}, []*domain.AuditEntry{}},
		} {
			require.Equal(t, tc.want, list(t, b, tc.f), tc.name)
		}
	})

	t.Run("ErrStopEndsTheWalk", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		appendAll(t, b, entry(0, "ops", "a"), entry(1, "ops", "b"))
		calls := 0
		err := b.store.View(b.ctx, func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(*domain.AuditEntry) error {
				calls++
				return store.ErrStop
			})
		})
		require.NoError(t, err)
		require.Equal(t, 1, calls)
	})
}
