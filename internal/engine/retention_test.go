package engine_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
)

// aged stores a message of queue in status s, created at created and last
// changed at updated.
func (b *testBundle) aged(t *testing.T, queue string, s domain.Status, created, updated time.Time) *domain.Message {
	t.Helper()
	m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: "WMS", Queue: queue,
		Stage: domain.Outbound, Status: s, CreatedAt: created, UpdatedAt: updated}
	b.update(t, func(w store.Writer) error {
		return w.Insert(m, []byte("payload of "+m.ID), domain.HistoryEntry{At: created, Actor: "test"})
	})
	return m
}

func (b *testBundle) exists(t *testing.T, id string) bool {
	t.Helper()
	found := true
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		_, err := r.Message(id)
		if err != nil {
			found = false
			require.ErrorIs(t, err, domain.ErrNotFound)
			_, err = r.Payload(id)
			require.ErrorIs(t, err, domain.ErrNotFound)
			_, err = r.History(id)
			require.ErrorIs(t, err, domain.ErrNotFound)
		}
		return nil
	}))
	return found
}

func TestPurge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := time.Now().UTC()
	old, cutoff := now.Add(-48*time.Hour), now.Add(-24*time.Hour)
	q := "XBTO" + code4("WMS")

	// Messages are created in id order, oldest first, as in a real store.
	oldDLVD := b.aged(t, q, domain.StatusDLVD, old, old)
	oldFAIL := b.aged(t, q, domain.StatusFAIL, old, old)
	var neverPurged []*domain.Message
	for _, s := range []domain.Status{domain.StatusNDLV, domain.StatusTBDL, domain.StatusWAIT, domain.StatusHOLD, domain.StatusPEND} {
		neverPurged = append(neverPurged, b.aged(t, q, s, old, old))
	}
	changedLately := b.aged(t, q, domain.StatusDLVD, old, now.Add(-time.Hour))
	recent := b.aged(t, q, domain.StatusDLVD, now, now)
	recentFAIL := b.aged(t, q, domain.StatusFAIL, now, now)
	before := b.queueRecord(t, q).Counts

	n, err := store.Purge(b.ctx, b.st, domain.StatusDLVD, cutoff, true, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n, "dry run counts what would go")
	require.True(t, b.exists(t, oldDLVD.ID), "a dry run deletes nothing")
	require.Equal(t, before, b.queueRecord(t, q).Counts)

	n, err = store.Purge(b.ctx, b.st, domain.StatusDLVD, cutoff, false, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, b.exists(t, oldDLVD.ID))
	require.True(t, b.exists(t, oldFAIL.ID), "FAIL has its own retention")

	n, err = store.Purge(b.ctx, b.st, domain.StatusFAIL, cutoff, false, nil)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, b.exists(t, oldFAIL.ID))

	for _, m := range append(neverPurged, changedLately, recent, recentFAIL) {
		require.True(t, b.exists(t, m.ID), "%s message %s", m.Status, m.ID)
	}
	after := b.queueRecord(t, q).Counts
	require.Equal(t, before[domain.StatusDLVD]-1, after[domain.StatusDLVD])
	require.Equal(t, before[domain.StatusFAIL]-1, after[domain.StatusFAIL])
	for _, s := range []domain.Status{domain.StatusNDLV, domain.StatusTBDL, domain.StatusWAIT, domain.StatusHOLD, domain.StatusPEND} {
		require.Equal(t, int64(1), after[s], "%s", s)
	}

	n, err = store.Purge(b.ctx, b.st, domain.StatusDLVD, cutoff, false, nil)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to purge")
}

func TestPurgeRefusesOpenStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, s := range []domain.Status{domain.StatusNDLV, domain.StatusTBDL, domain.StatusWAIT, domain.StatusHOLD,
		domain.StatusPEND, domain.StatusDLNG} {
		n, err := store.Purge(b.ctx, b.st, s, time.Now(), false, nil)
		require.ErrorIs(t, err, domain.ErrInvalid, "%s", s)
		require.Zero(t, n)
	}
}

func TestPurgeWorksInBatches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	old := time.Now().UTC().Add(-48 * time.Hour)
	q := "XBTO" + code4("WMS")
	const total = 2500 // more than one purge batch
	b.update(t, func(w store.Writer) error {
		for range total {
			m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: "WMS", Queue: q,
				Stage: domain.Outbound, Status: domain.StatusDLVD, CreatedAt: old, UpdatedAt: old}
			if err := w.Insert(m, []byte("x"), domain.HistoryEntry{At: old, Actor: "test"}); err != nil {
				return err
			}
		}
		return nil
	})
	keep := b.aged(t, q, domain.StatusDLVD, time.Now().UTC(), time.Now().UTC())

	n, err := store.Purge(b.ctx, b.st, domain.StatusDLVD, old.Add(time.Hour), true, nil)
	require.NoError(t, err)
	require.Equal(t, total, n)

	n, err = store.Purge(b.ctx, b.st, domain.StatusDLVD, old.Add(time.Hour), false, nil)
	require.NoError(t, err)
	require.Equal(t, total, n)
	require.Equal(t, int64(1), b.queueRecord(t, q).Counts[domain.StatusDLVD])
	require.True(t, b.exists(t, keep.ID))
}

func TestRetentionLoopPurgesFinalMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clk := newClock()
	b.now = clk.Now
	// The loop checks every tenth of the shorter retention: every
	// millisecond of real time. The engine's clock stands still, so
	// nothing is due until the test moves it.
	b.cfg.Engine.Retention = config.Retention{Delivered: 10 * time.Millisecond, Failed: 20 * time.Millisecond}
	ep := b.newEndpoint(t, "WMS")
	ep.failPayload("bad", http.StatusBadRequest)
	in := b.send(t, eo("WMS", "good"), eo("WMS", "bad"))
	b.start(t)
	b.waitDelivered(t, 1)
	b.waitFor(t, "the bad message NDLV", func() bool { return b.count(engine.EventFailed) == 1 })
	good, bad := b.outboundOf(t, in[0].ID), b.outboundOf(t, in[1].ID)

	clk.Advance(time.Minute)
	b.waitFor(t, "a purge", func() bool { return b.logged("purged") })
	require.Equal(t, in[0].ID, good.ID, "one message, one id")
	require.Equal(t, in[1].ID, bad.ID)
	require.False(t, b.exists(t, good.ID))
	require.True(t, b.exists(t, bad.ID), "NDLV is never purged")
}

// engine.retention.audit: what is older goes, what is not stays, and the
// purge is logged — at start, and then as the clock moves on. (The loop
// checks every tenth of the retention: every 10ms of real time here; the
// store's clock stands still until the test moves it.)
func TestRetentionLoopPurgesTheAuditLog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clk := newClock()
	b.now = clk.Now
	b.cfg.Engine.Retention = config.Retention{Audit: 100 * time.Millisecond}
	b.update(t, func(w store.Writer) error {
		for _, age := range []time.Duration{200 * time.Millisecond, 150 * time.Millisecond, 50 * time.Millisecond, time.Millisecond} {
			if err := w.AppendAudit(&domain.AuditEntry{At: clk.Now().Add(-age), Actor: "anonymous", Action: "POST /v1/purge",
				Result: domain.AuditDenied}); err != nil {
				return err
			}
		}
		return nil
	})
	audit := func() []time.Time {
		var at []time.Time
		require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
				at = append(at, e.At)
				return nil
			})
		}))
		return at
	}
	start := clk.Now()
	b.start(t)
	b.waitFor(t, "the audit purge at start", func() bool { return b.logged("audit entries purged") })
	require.Equal(t, []time.Time{start.Add(-50 * time.Millisecond), start.Add(-time.Millisecond)}, audit())

	clk.Advance(time.Second)
	b.waitFor(t, "the next audit purge", func() bool { return len(audit()) == 0 })
}

// The retention loop removes, once their messages are purged, the empty
// queues that the tuning values in force would not create again: with
// EO_OUTBOUND_PARALLEL at its default of 1, a slotted EO outbound queue
// (left from a higher value) goes, the receiver's one queue stays.
func TestRetentionLoopRemovesUncreatedQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clk := newClock()
	b.now = clk.Now
	b.cfg.Engine.Retention = config.Retention{Delivered: 10 * time.Millisecond, Failed: 10 * time.Millisecond}
	b.newEndpoint(t, "WMS")
	old := clk.Now().Add(-time.Hour)
	plain, slotted := "XBTO"+code4("WMS"), "XBTO"+code4("WMS")+"0003"
	b.aged(t, plain, domain.StatusDLVD, old, old)
	b.aged(t, slotted, domain.StatusDLVD, old, old)
	b.start(t)
	b.waitFor(t, "the queue retention", func() bool { return b.logged("empty queues removed") })
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		_, err := r.Queue(slotted)
		require.ErrorIs(t, err, domain.ErrNotFound)
		q, err := r.Queue(plain)
		require.NoError(t, err)
		require.Empty(t, q.Counts)
		return nil
	}))
}
