package serve

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// engine.retention.audit: what is older goes, what is not stays, and the
// purge is logged.
func TestAuditRetentionPurges(t *testing.T) {
	t.Parallel()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		for _, age := range []time.Duration{100 * 24 * time.Hour, 91 * 24 * time.Hour, 89 * 24 * time.Hour, time.Hour} {
			if err := w.AppendAudit(&domain.AuditEntry{At: now.Add(-age), Actor: "anonymous", Action: "POST /v1/purge",
				Result: domain.AuditDenied}); err != nil {
				return err
			}
		}
		return nil
	}))
	var logs bytes.Buffer
	a := &auditRetention{st: st, keep: 90 * 24 * time.Hour, now: func() time.Time { return now },
		log: slog.New(slog.NewTextHandler(&logs, nil))}
	require.Equal(t, 2, a.purge(ctx))
	require.Contains(t, logs.String(), "audit entries purged")
	require.Zero(t, a.purge(ctx), "nothing more is old enough")

	var left []time.Time
	require.NoError(t, st.View(ctx, func(r store.Reader) error {
		return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
			left = append(left, e.At)
			return nil
		})
	}))
	require.Equal(t, []time.Time{now.Add(-89 * 24 * time.Hour), now.Add(-time.Hour)}, left)
}
