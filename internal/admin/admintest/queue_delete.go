package admintest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// testActQueueDelete: queue.delete removes empty queues, skips one that
// holds messages saying how many (of which statuses), reports unknown
// names not found, and is audited with its targets; a selection takes
// empty queues only.
func testActQueueDelete(t *testing.T, b *bundle) {
	b.queueFixture(t)
	cutoff := time.Now().Add(time.Hour)
	_, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: cutoff})
	require.NoError(t, err)
	done, err := b.svc.Queue(b.ctx, "XBQIDONE")
	require.NoError(t, err)
	require.Empty(t, done.Counts, "purge emptied XBQIDONE; it stays, an EOIO queue")

	dry := b.act(t, admin.ActParams{Action: admin.ActDeleteQueue, Targets: []string{"XBQIDONE"}, DryRun: true})
	require.Equal(t, []string{"XBQIDONE"}, dry.ChangedIDs)
	require.Contains(t, names(b.queues(t, admin.QueueFilter{})), "XBQIDONE", "a dry run deletes nothing")

	res := b.act(t, admin.ActParams{Action: admin.ActDeleteQueue, Targets: []string{"XBQIDONE", "XBQIBLOCKED", "XBQINOPE"}})
	require.Equal(t, []string{"XBQIDONE"}, res.ChangedIDs)
	require.Equal(t, []string{"XBQINOPE"}, res.NotFound)
	require.Equal(t, []admin.Skipped{{ID: "XBQIBLOCKED", Reason: "the queue holds 2 messages (1 HOLD, 1 NDLV); only an empty queue is deleted: " +
		"its open messages must end DLVD or FAIL, and purge removes those"}}, res.Skipped)
	require.Equal(t, []string{"XBQIBLOCKED", "XBQIWAITING", "XBTI0000", "XBTO2107"}, names(b.queues(t, admin.QueueFilter{})))
	entries := b.auditLog(t, admin.AuditFilter{Action: string(admin.ActDeleteQueue)})
	require.Len(t, entries, 1)
	require.Equal(t, []string{"XBQIDONE", "XBQIBLOCKED", "XBQINOPE"}, entries[0].Targets)
	require.Equal(t, domain.AuditConflict, entries[0].Result)

	// A selection takes the empty queues only: none is left.
	sel := b.act(t, admin.ActParams{Action: admin.ActDeleteQueue, Select: &admin.Selection{Queues: &admin.QueueFilter{}}})
	require.Zero(t, sel.Changed)
	require.Empty(t, sel.Skipped)
}

// testPurgeQueues: purge removes, after the messages, the empty queues
// that the tuning values in force would not create again — a slot beyond
// a lowered EO_OUTBOUND_PARALLEL — and keeps the others.
func testPurgeQueues(t *testing.T, b *bundle) {
	_, err := b.svc.Tune(b.ctx, set("EO_OUTBOUND_PARALLEL", "WMS", "3"))
	require.NoError(t, err)
	in := b.sendOne(t, eo("a"))
	kept, gone := b.outbound(t, in, "WMS", "XBTO21070001"), b.outbound(t, in, "WMS", "XBTO21070002")
	b.deliver(t, kept.ID)
	b.deliver(t, gone.ID)
	_, err = b.svc.Tune(b.ctx, set("EO_OUTBOUND_PARALLEL", "WMS", "2"))
	require.NoError(t, err)

	cutoff := time.Now().Add(time.Hour)
	dry, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: cutoff, DryRun: true})
	require.NoError(t, err)
	require.Zero(t, dry.Queues, "a dry run deletes no message, so every queue still holds one")
	res, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: cutoff})
	require.NoError(t, err)
	require.Equal(t, 2, res.Counts[domain.StatusDLVD])
	require.Equal(t, 1, res.Queues)
	require.Equal(t, []string{"XBTI0000", "XBTO21070001"}, names(b.queues(t, admin.QueueFilter{})))
	var purged []string
	for _, e := range b.auditLog(t, admin.AuditFilter{Action: "purge"}) {
		if e.Detail == "1 empty queues that no tuning value in force creates" {
			purged = e.Targets
		}
	}
	require.Equal(t, []string{"XBTO21070002"}, purged)
}
