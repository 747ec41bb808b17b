package local_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestPurgeOnlyFinalStatuses(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	f.now = f.now.Add(48 * time.Hour)
	// Every message was last changed two days ago; the cutoffs are now.
	p := admin.PurgeParams{DeliveredBefore: f.now, FailedBefore: f.now}
	before := f.snapshot(t)

	dry, err := f.svc.Purge(f.ctx, admin.PurgeParams{DeliveredBefore: p.DeliveredBefore, FailedBefore: p.FailedBefore, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 1, domain.StatusFAIL: 1}, DryRun: true}, dry)
	require.Equal(t, before, f.snapshot(t), "a dry run deletes nothing")
	require.Empty(t, f.auditLog(t))

	res, err := f.svc.Purge(f.ctx, p)
	require.NoError(t, err)
	require.Equal(t, &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 1, domain.StatusFAIL: 1}}, res)
	for _, s := range domain.Statuses {
		id := f.byStatus[s].ID
		if s.Final() {
			require.Nil(t, f.message(t, id), "%s is purged", s)
			continue
		}
		require.Equal(t, s, f.status(t, id), "%s is never purged", s)
	}
	require.Equal(t, domain.StatusNDLV, f.status(t, f.blacklisted.ID))
	require.Equal(t, f.recount(t), f.counters(t))

	entries := f.auditLog(t)
	require.Len(t, entries, 2, "one entry per purged batch")
	require.Equal(t, []string{f.byStatus[domain.StatusDLVD].ID}, entries[0].Targets)
	require.Equal(t, []string{f.byStatus[domain.StatusFAIL].ID}, entries[1].Targets)
	for _, e := range entries {
		require.Equal(t, "purge", e.Action)
		require.Equal(t, domain.AuditOK, e.Result)
	}
}

func TestPurgeCutoffs(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	dlvd, fail := f.byStatus[domain.StatusDLVD].ID, f.byStatus[domain.StatusFAIL].ID

	// A cutoff at the moment of the last change keeps the message: only
	// messages changed before it go.
	res, err := f.svc.Purge(f.ctx, admin.PurgeParams{DeliveredBefore: f.now, FailedBefore: f.now})
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int{domain.StatusDLVD: 0, domain.StatusFAIL: 0}, res.Counts)

	// Only the status whose cutoff is given is purged.
	res, err = f.svc.Purge(f.ctx, admin.PurgeParams{FailedBefore: f.now.Add(time.Second)})
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int{domain.StatusFAIL: 1}, res.Counts)
	require.Equal(t, domain.StatusDLVD, f.status(t, dlvd))
	require.Nil(t, f.message(t, fail))
}

func TestPurgeDryRunCountsPerStatus(t *testing.T) {
	t.Parallel()

	b := setup(t)
	msgs := b.send(t, eo("1"), eo("2"), eo("3"), eo("4"), eo("5"))
	for _, m := range msgs[:3] {
		b.deliver(t, m.ID)
	}
	b.ndlv(t, msgs[3].ID, domain.ErrorPermanent, "HTTP 400")
	b.move(t, msgs[3].ID, domain.StatusNDLV, domain.StatusFAIL, nil)
	b.now = b.now.Add(time.Hour)
	before := b.snapshot(t)

	res, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: b.now, FailedBefore: b.now, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int{domain.StatusDLVD: 3, domain.StatusFAIL: 1}, res.Counts)
	require.True(t, res.DryRun)
	require.Equal(t, before, b.snapshot(t))
}
