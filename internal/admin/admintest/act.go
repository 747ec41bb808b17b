package admintest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func testActResendFail(t *testing.T, b *bundle) {
	f := b.messageFixture(t)

	res := b.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{f.ndlv.ID, f.wait.ID, f.tbdl.ID, unknownID, f.ndlv.ID}})
	require.Equal(t, &admin.BulkResult{
		Changed:    2,
		ChangedIDs: []string{f.ndlv.ID, f.wait.ID},
		Skipped: []admin.Skipped{{ID: f.tbdl.ID, Status: domain.StatusTBDL,
			Reason: "status is TBDL; message.resend needs NDLV or WAIT"}},
		NotFound: []string{unknownID},
	}, res)
	require.Equal(t, domain.StatusTBDL, b.status(t, f.ndlv.ID))
	m, err := b.svc.Message(b.ctx, f.wait.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Attempts, "a resend starts the retries afresh")
	require.Nil(t, m.NextAttemptAt)
	last := m.History[len(m.History)-1]
	require.Equal(t, domain.StatusWAIT, last.From)
	require.Equal(t, domain.StatusTBDL, last.To)
	require.NotEmpty(t, last.Actor)
	require.Equal(t, "message.resend by "+last.Actor, last.Reason)

	// Failing the blocked EOIO head with the message held behind it fails both.
	head := b.messages(t, admin.MessageFilter{Queues: []string{"XBQIBLOCKED"}})[0]
	res = b.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{head.ID, f.hold.ID}, Reason: "wrong customer"})
	require.Equal(t, []string{head.ID, f.hold.ID}, res.ChangedIDs)
	require.Empty(t, res.Skipped)
	m, err = b.svc.Message(b.ctx, f.hold.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusFAIL, m.Status)
	require.Equal(t, domain.ErrorAdmin, m.ErrorClass)
	actor := m.History[len(m.History)-1].Actor
	require.Equal(t, "failed by "+actor+": wrong customer", m.Error)
	require.Equal(t, "message.fail by "+actor+": wrong customer", m.History[len(m.History)-1].Reason)

	res = b.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{f.dlvd.ID}})
	require.Zero(t, res.Changed)
	require.Equal(t, []admin.Skipped{{ID: f.dlvd.ID, Status: domain.StatusDLVD,
		Reason: "status is DLVD; message.fail needs NDLV, WAIT or HOLD"}}, res.Skipped)
}

func testActBlacklist(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	second := b.crash(t, b.sendOne(t, eo("poison 2")).ID)

	listed := b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: ptr(true)})
	require.Equal(t, []string{f.crashed.ID, second.ID}, ids(listed))

	res := b.act(t, admin.ActParams{Action: admin.ActRelease, Targets: []string{f.crashed.ID, f.ndlv.ID}})
	require.Equal(t, []string{f.crashed.ID}, res.ChangedIDs)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, f.ndlv.ID, res.Skipped[0].ID)
	require.Equal(t, domain.StatusNDLV, res.Skipped[0].Status)
	require.Contains(t, res.Skipped[0].Reason, "not blacklisted")
	require.Contains(t, res.Skipped[0].Reason, "message resend")

	m, err := b.svc.Message(b.ctx, f.crashed.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Crashes, "a release resets the crashes")
	require.False(t, m.Blacklisted)

	res = b.act(t, admin.ActParams{Action: admin.ActBlacklistFail, Targets: []string{second.ID}})
	require.Equal(t, []string{second.ID}, res.ChangedIDs)
	require.Equal(t, domain.StatusFAIL, b.status(t, second.ID))
	require.Empty(t, b.messages(t, admin.MessageFilter{Blacklisted: ptr(true), Statuses: []domain.Status{domain.StatusNDLV}}))
}

// A resend leaves blacklisted messages alone unless asked: they are poison,
// and releasing them is blacklist.release's.
func testActResendBlacklisted(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	all := &admin.Selection{Messages: &admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}}}

	res := b.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{f.crashed.ID}})
	require.Zero(t, res.Changed)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, f.crashed.ID, res.Skipped[0].ID)
	require.Contains(t, res.Skipped[0].Reason, "blacklisted after 2 crashes; message.resend leaves it alone")
	require.Contains(t, res.Skipped[0].Reason, "blacklist release")

	res = b.act(t, admin.ActParams{Action: admin.ActResend, Select: all, DryRun: true})
	require.NotContains(t, res.ChangedIDs, f.crashed.ID, "a selection leaves it out")
	require.Contains(t, res.ChangedIDs, f.ndlv.ID)
	require.Empty(t, res.Skipped)
	require.Zero(t, res.BlacklistedChanged)

	_, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActResend, DryRun: true,
		Select: &admin.Selection{Messages: &admin.MessageFilter{Blacklisted: ptr(true)}}})
	require.ErrorIs(t, err, domain.ErrInvalid, "a selection of blacklisted messages is refused")

	res = b.act(t, admin.ActParams{Action: admin.ActResend, Select: all, IncludeBlacklisted: true})
	require.Contains(t, res.ChangedIDs, f.crashed.ID)
	require.Equal(t, 1, res.BlacklistedChanged, "it says how many were blacklisted")
	m, err := b.svc.Message(b.ctx, f.crashed.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Crashes)
	require.False(t, m.Blacklisted)
}

func testActTx(t *testing.T, b *bundle) {
	var pend []*domain.Message
	for range 3 {
		req := eo("tx")
		req.Prepare = true
		pend = append(pend, b.sendOne(t, req))
	}
	tbdl := b.sendOne(t, eo("plain"))

	res := b.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{pend[0].ID, tbdl.ID}})
	require.Equal(t, []string{pend[0].ID}, res.ChangedIDs)
	require.Equal(t, []admin.Skipped{{ID: tbdl.ID, Status: domain.StatusTBDL, Reason: "status is TBDL; tx.commit needs PEND"}}, res.Skipped)
	require.Equal(t, domain.StatusTBDL, b.status(t, pend[0].ID))

	res = b.act(t, admin.ActParams{Action: admin.ActRollback, Targets: []string{pend[1].ID, pend[0].ID}})
	require.Equal(t, []string{pend[1].ID}, res.ChangedIDs)
	require.Len(t, res.Skipped, 1)
	_, err := b.svc.Message(b.ctx, pend[1].ID)
	require.ErrorIs(t, err, domain.ErrNotFound, "a rollback deletes the message")

	res = b.act(t, admin.ActParams{Action: admin.ActRollback, Targets: []string{pend[1].ID}})
	require.Equal(t, []string{pend[1].ID}, res.NotFound)
	require.Equal(t, []string{pend[2].ID}, ids(b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}})))
}

func testActQueues(t *testing.T, b *bundle) {
	b.send(t, eo("x"), eoio("ORDERS", "y"))

	res := b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTI0000", "XBQIORDERS", "XBQINOPE"}})
	require.Equal(t, &admin.BulkResult{Changed: 2, ChangedIDs: []string{"XBTI0000", "XBQIORDERS"},
		Skipped: []admin.Skipped{}, NotFound: []string{"XBQINOPE"}}, res)
	q, err := b.svc.Queue(b.ctx, "XBTI0000")
	require.NoError(t, err)
	require.True(t, q.Stopped)
	require.Equal(t, domain.QueueStopped, q.State)
	require.Equal(t, []string{"XBQIORDERS", "XBTI0000"}, names(b.queues(t, admin.QueueFilter{States: []domain.QueueState{domain.QueueStopped}})))

	res = b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTI0000"}})
	require.Equal(t, []admin.Skipped{{ID: "XBTI0000", Reason: "the queue is already STOPPED"}}, res.Skipped)

	res = b.act(t, admin.ActParams{Action: admin.ActStart, Targets: []string{"XBTI0000"}})
	require.Equal(t, []string{"XBTI0000"}, res.ChangedIDs)
	res = b.act(t, admin.ActParams{Action: admin.ActStart, Targets: []string{"XBTI0000"}})
	require.Equal(t, []admin.Skipped{{ID: "XBTI0000", Reason: "the queue is already running"}}, res.Skipped)
	q, err = b.svc.Queue(b.ctx, "XBTI0000")
	require.NoError(t, err)
	require.Equal(t, domain.QueueActive, q.State)
}

func testActDryRun(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	before := b.messages(t, admin.MessageFilter{})
	audit := b.auditLog(t, admin.AuditFilter{})

	res := b.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{f.ndlv.ID, f.tbdl.ID, unknownID}, DryRun: true})
	require.True(t, res.DryRun)
	require.Equal(t, []string{f.ndlv.ID}, res.ChangedIDs)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, []string{unknownID}, res.NotFound)

	res = b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTI0000"}, DryRun: true})
	require.True(t, res.DryRun)
	require.Equal(t, 1, res.Changed)

	res = b.act(t, admin.ActParams{Action: admin.ActRollback, Targets: []string{f.pend.ID}, DryRun: true})
	require.Equal(t, 1, res.Changed)

	require.Equal(t, ids(before), ids(b.messages(t, admin.MessageFilter{})), "a dry run changes nothing")
	for _, m := range before {
		require.Equal(t, m.Status, b.status(t, m.ID))
	}
	q, err := b.svc.Queue(b.ctx, "XBTI0000")
	require.NoError(t, err)
	require.False(t, q.Stopped)
	require.Len(t, b.auditLog(t, admin.AuditFilter{}), len(audit), "a dry run writes no audit entry")
}

func testActRefused(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	for name, p := range map[string]admin.ActParams{
		"unknown action":    {Action: "message.delete", Targets: []string{f.ndlv.ID}},
		"empty action":      {Action: "", Targets: []string{f.ndlv.ID}},
		"action with slash": {Action: "message/resend", Targets: []string{f.ndlv.ID}},
		"dot action":        {Action: ".", Targets: []string{f.ndlv.ID}},
		"dot-dot action":    {Action: "..", Targets: []string{f.ndlv.ID}},
		"malformed id":      {Action: admin.ActResend, Targets: []string{f.ndlv.ID, "nope"}},
		"empty id":          {Action: admin.ActFail, Targets: []string{""}},
		"long queue":        {Action: admin.ActStop, Targets: []string{strings.Repeat("Q", 25)}},
		"empty queue name":  {Action: admin.ActStart, Targets: []string{""}},
		"no targets":        {Action: admin.ActResend},
		"reason with ESC":   {Action: admin.ActFail, Targets: []string{f.ndlv.ID}, Reason: "x\x1b[2J"},
		"reason over 1 KiB": {Action: admin.ActFail, Targets: []string{f.ndlv.ID}, Reason: strings.Repeat("r", domain.MaxReason+1)},
	} {
		res, err := b.svc.Act(b.ctx, p)
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		require.Nil(t, res, name)
	}
	require.Equal(t, domain.StatusNDLV, b.status(t, f.ndlv.ID), "a refused action changes nothing")

	// Refusals are audited as errors.
	var refused []*domain.AuditEntry
	for _, e := range b.auditLog(t, admin.AuditFilter{OldestFirst: true}) {
		if e.Result == domain.AuditError {
			refused = append(refused, e)
		}
	}
	require.Len(t, refused, 12)
}

func testActMany(t *testing.T, b *bundle) {
	// More targets than one commit of the local service takes.
	const n = 2100
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = eo("x")
		reqs[i].Prepare = true
	}
	targets := ids(b.send(t, reqs...))
	res := b.act(t, admin.ActParams{Action: admin.ActCommit, Targets: append(targets, unknownID)})
	require.Equal(t, n, res.Changed)
	require.Equal(t, targets, res.ChangedIDs)
	require.Equal(t, []string{unknownID}, res.NotFound)
	require.Empty(t, b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}}))

	var commits []*domain.AuditEntry
	for _, e := range b.auditLog(t, admin.AuditFilter{OldestFirst: true}) {
		if e.Action == string(admin.ActCommit) {
			commits = append(commits, e)
		}
	}
	require.Len(t, commits, 3, "one audit entry per batch")
	var audited []string
	for _, e := range commits {
		audited = append(audited, e.Targets...)
	}
	require.Equal(t, append(targets, unknownID), audited)
}

// testActSelection: --all hands the service a selection instead of ids;
// it acts on what the filter names, up to Last, as one action.
func testActSelection(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	later := b.sendOne(t, eo("later"))
	b.ndlv(t, later.ID, domain.ErrorTransient, "HTTP 503")

	sel := &admin.Selection{Messages: &admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV, domain.StatusWAIT},
		Receivers: []string{"WMS"}}, Last: f.wait.ID}
	want := b.messages(t, *sel.Messages)
	var counted []string
	for _, m := range want {
		if m.ID <= sel.Last {
			counted = append(counted, m.ID)
		}
	}
	require.NotEmpty(t, counted)
	require.NotContains(t, counted, later.ID, "sent after the last one counted")

	dry := b.act(t, admin.ActParams{Action: admin.ActResend, Select: sel, DryRun: true, CountOnly: true})
	require.Equal(t, len(counted), dry.Changed)
	require.Empty(t, dry.ChangedIDs)
	require.True(t, dry.DryRun)

	res := b.act(t, admin.ActParams{Action: admin.ActResend, Select: sel})
	require.Equal(t, counted, res.ChangedIDs)
	require.Equal(t, domain.StatusNDLV, b.status(t, later.ID), "left alone")

	// Queues: stop selects the running ones, start the stopped ones.
	res = b.act(t, admin.ActParams{Action: admin.ActStop, Select: &admin.Selection{Queues: &admin.QueueFilter{Name: "XBQI*"}}})
	require.Equal(t, names(b.queues(t, admin.QueueFilter{Name: "XBQI*"})), res.ChangedIDs)
	res = b.act(t, admin.ActParams{Action: admin.ActStop, Select: &admin.Selection{Queues: &admin.QueueFilter{Name: "XBQI*"}}})
	require.Zero(t, res.Changed, "nothing left to stop")
	require.Empty(t, res.Skipped)

	_, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStop, Select: &admin.Selection{Messages: &admin.MessageFilter{}}})
	require.ErrorIs(t, err, domain.ErrInvalid)
}
