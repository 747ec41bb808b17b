package local_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestActMalformedIDChangesNothing(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	ndlv := f.byStatus[domain.StatusNDLV].ID
	before := f.snapshot(t)

	_, err := f.svc.Act(f.ctx, admin.ActParams{Action: admin.ActFail, Targets: []string{ndlv, "0193-not-an-id"}})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `"0193-not-an-id"`)
	require.ErrorContains(t, err, "nothing was changed")
	require.Equal(t, before, f.snapshot(t), "the valid id before it was not applied")

	entries := f.auditLog(t)
	require.Len(t, entries, 1, "a refused action is audited too (§6)")
	e := entries[0]
	require.Equal(t, string(admin.ActFail), e.Action)
	require.Equal(t, domain.AuditError, e.Result)
	require.Equal(t, []string{ndlv, "0193-not-an-id"}, e.Targets)
	require.Contains(t, e.Detail, "0193-not-an-id")
	require.Equal(t, "local:test", e.Actor)
	require.Equal(t, f.now, e.At)
}

func TestActMalformedIDAfterAFullBatch(t *testing.T) {
	t.Parallel()

	f := setup(t)
	targets := append(f.bulkNDLV(t, 1499, false), "not-an-id")
	before := f.snapshot(t)
	commits := f.st.Commits()

	_, err := f.svc.Act(f.ctx, admin.ActParams{Action: admin.ActResend, Targets: targets})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.Equal(t, before, f.snapshot(t), "the first batch of 1000 was not applied either")
	require.Equal(t, uint64(1), f.st.Commits()-commits, "only the refusal's audit entry was committed")
	entries := f.auditLog(t)
	require.Len(t, entries, 1)
	require.Equal(t, domain.AuditError, entries[0].Result)
}

func TestActQueueNameChecked(t *testing.T) {
	t.Parallel()

	f := setup(t)
	for _, name := range []string{"", "XBQIAVERYLONGQUEUENAME_25"} {
		_, err := f.svc.Act(f.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{name}})
		require.ErrorIs(t, err, domain.ErrInvalid, "queue name %q", name)
	}
	entries := f.auditLog(t)
	require.Len(t, entries, 2)
	for _, e := range entries {
		require.Equal(t, domain.AuditError, e.Result)
	}
}

// TestActBatchesWithAuditInTheSameCommit applies an action to 1502 targets:
// two batches, each one commit holding its changes and its audit entry.
func TestActBatchesWithAuditInTheSameCommit(t *testing.T) {
	t.Parallel()

	f := setup(t)
	ids := f.bulkNDLV(t, 1500, false)
	delivered := f.deliver(t, f.sendOne(t, eo("done")).ID)
	missing := domain.NewID()
	targets := append(append([]string{}, ids...), delivered.ID, missing)
	commits := f.st.Commits()

	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: targets, Reason: "bad data"})
	require.Equal(t, 1500, res.Changed)
	require.Equal(t, ids, res.ChangedIDs)
	require.Equal(t, []string{missing}, res.NotFound)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, uint64(2), f.st.Commits()-commits, "one commit per batch of 1000, audit entry included")

	entries := f.auditLog(t)
	require.Len(t, entries, 2, "one audit entry per batch")
	first, second := entries[0], entries[1]
	require.Equal(t, targets[:1000], first.Targets)
	require.Equal(t, domain.AuditOK, first.Result, "every target of the first batch changed")
	require.Equal(t, "reason: bad data", first.Detail)
	require.Equal(t, targets[1000:], second.Targets)
	require.Equal(t, domain.AuditConflict, second.Result)
	require.Contains(t, second.Detail, "changed 500, skipped 1, not found 1")
	require.Contains(t, second.Detail, delivered.ID+": status is DLVD")
	require.Contains(t, second.Detail, "reason: bad data")
	for _, e := range entries {
		require.Equal(t, string(admin.ActFail), e.Action)
		require.Equal(t, "local:test", e.Actor)
		require.Equal(t, "local", e.Source)
	}
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActDryRun(t *testing.T) {
	t.Parallel()

	for _, rule := range actionRules {
		t.Run(string(rule.action), func(t *testing.T) {
			t.Parallel()

			f := setupStatuses(t)
			targets := []string{domain.NewID(), f.blacklisted.ID, f.holdHead.ID}
			for _, s := range domain.Statuses {
				targets = append(targets, f.byStatus[s].ID)
			}
			before := f.snapshot(t)
			commits := f.st.Commits()

			dry := f.act(t, admin.ActParams{Action: rule.action, Targets: targets, DryRun: true})
			require.True(t, dry.DryRun)
			require.Positive(t, dry.Changed, "the fixture has a message every action changes")
			require.Equal(t, before, f.snapshot(t), "a dry run changes nothing")
			require.Empty(t, f.auditLog(t), "and writes no audit entry")
			require.Zero(t, f.st.Commits()-commits)

			real := f.act(t, admin.ActParams{Action: rule.action, Targets: targets})
			require.False(t, real.DryRun)
			dry.DryRun = false
			require.Equal(t, real, dry, "the dry run reported what the action then did")
			require.NotEqual(t, before, f.snapshot(t))
		})
	}
}

func TestActStopStart(t *testing.T) {
	t.Parallel()

	f := setup(t)
	svc := newServiceOn(f)
	queue := f.sendOne(t, eoio("ORDERS", "1")).Queue
	missing := "XBQINOSUCHQUEUE"
	f.woken()

	res, err := svc.Act(f.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{queue, missing, queue}})
	require.NoError(t, err)
	require.Equal(t, []string{queue}, res.ChangedIDs, "a repeated name counts once")
	require.Equal(t, []string{missing}, res.NotFound)
	q, err := f.svc.Queue(f.ctx, queue)
	require.NoError(t, err)
	require.True(t, q.Stopped)
	require.Equal(t, domain.QueueStopped, q.State)
	require.True(t, f.woken(), "a running engine is told")

	res, err = svc.Act(f.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{queue}})
	require.NoError(t, err)
	require.Zero(t, res.Changed)
	require.Equal(t, []admin.Skipped{{ID: queue, Reason: "the queue is already STOPPED"}}, res.Skipped)

	f.woken()
	res, err = svc.Act(f.ctx, admin.ActParams{Action: admin.ActStart, Targets: []string{queue}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Changed)
	require.True(t, f.woken(), "a started queue wakes the engine")
	q, err = f.svc.Queue(f.ctx, queue)
	require.NoError(t, err)
	require.False(t, q.Stopped)
	require.Equal(t, domain.QueueActive, q.State)

	res, err = svc.Act(f.ctx, admin.ActParams{Action: admin.ActStart, Targets: []string{queue}})
	require.NoError(t, err)
	require.Equal(t, []admin.Skipped{{ID: queue, Reason: "the queue is already running"}}, res.Skipped)

	results := []string{}
	for _, e := range f.auditLog(t) {
		results = append(results, e.Action+" "+e.Result)
	}
	require.Equal(t, []string{"queue.stop conflict", "queue.stop conflict", "queue.start ok", "queue.start conflict"}, results)
}

func TestActDryRunDoesNotNotify(t *testing.T) {
	t.Parallel()

	f := setup(t)
	svc := newServiceOn(f)
	queue := f.sendOne(t, eoio("ORDERS", "1")).Queue
	f.woken()
	res, err := svc.Act(f.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{queue}, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, 1, res.Changed)
	require.False(t, f.woken(), "a dry run changes nothing, so wakes nothing")
	q, err := f.svc.Queue(f.ctx, queue)
	require.NoError(t, err)
	require.False(t, q.Stopped)
}

// TestActStopSelection: stop on a selection stops the running queues it
// names and leaves the stopped ones alone, skipping none.
func TestActStopSelection(t *testing.T) {
	t.Parallel()

	f := setup(t)
	a := f.sendOne(t, eoio("A", "1")).Queue
	b := f.sendOne(t, eoio("B", "1")).Queue
	c := f.sendOne(t, eoio("C", "1")).Queue
	f.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{b}})

	res := f.act(t, admin.ActParams{Action: admin.ActStop, Select: &admin.Selection{Queues: &admin.QueueFilter{Name: "XBQI*"}, Last: b}})
	require.Equal(t, []string{a}, res.ChangedIDs, "b is stopped already; c comes after the last one counted")
	require.Empty(t, res.Skipped)

	res = f.act(t, admin.ActParams{Action: admin.ActStart, Select: &admin.Selection{Queues: &admin.QueueFilter{}}})
	require.Equal(t, []string{a, b}, res.ChangedIDs, "start selects the stopped ones")
	q, err := f.svc.Queue(f.ctx, c)
	require.NoError(t, err)
	require.False(t, q.Stopped)
}
