package admintest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

const (
	eoInbound  = "EO_INBOUND_PARALLEL"
	eoOutbound = "EO_OUTBOUND_PARALLEL"
)

func testTuning(t *testing.T, b *bundle) {
	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []admin.TuningEntry{
		{Param: eoInbound, Sub: "SENDER", Value: 1, Queues: []string{}},
		{Param: eoInbound, Sub: "CENTRAL", Value: 1, Queues: []string{}},
		{Param: eoInbound, Sub: "RECEIVER", Value: 1, Queues: []string{}},
		{Param: eoOutbound, Sub: "", Value: 1, Queues: []string{}},
	}, entries)

	first := b.sendOne(t, eo("before"))
	e, err := b.svc.Tune(b.ctx, eoInbound, "CENTRAL", 8)
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoInbound, Sub: "CENTRAL", Value: 8, Set: true, Queues: []string{first.Queue}}, e)

	e, err = b.svc.Tune(b.ctx, eoOutbound, "WMS", 9999)
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoOutbound, Sub: "WMS", Value: 9999, Set: true, Queues: []string{}}, e)

	entries, err = b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []admin.TuningEntry{
		{Param: eoInbound, Sub: "SENDER", Value: 1, Queues: []string{}},
		{Param: eoInbound, Sub: "CENTRAL", Value: 8, Set: true, Queues: []string{first.Queue}},
		{Param: eoInbound, Sub: "RECEIVER", Value: 1, Queues: []string{}},
		{Param: eoOutbound, Sub: "", Value: 1, Queues: []string{}},
		{Param: eoOutbound, Sub: "WMS", Value: 9999, Set: true, Queues: []string{}},
	}, entries)

	// Unset: the default applies again, the receiver's own entry is gone.
	e, err = b.svc.Tune(b.ctx, eoOutbound, "WMS", 0)
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoOutbound, Sub: "", Value: 1, Queues: []string{}}, e)
	e, err = b.svc.Tune(b.ctx, eoInbound, "CENTRAL", 0)
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoInbound, Sub: "CENTRAL", Value: 1, Queues: []string{first.Queue}}, e)

	var log []string
	for _, a := range b.auditLog(t, admin.AuditFilter{}) {
		require.Equal(t, domain.AuditOK, a.Result)
		log = append(log, fmt.Sprint(a.Action, " ", a.Targets, " ", a.Detail))
	}
	require.Equal(t, []string{
		"tune.set [EO_INBOUND_PARALLEL/CENTRAL] value 8",
		"tune.set [EO_OUTBOUND_PARALLEL/WMS] value 9999",
		"tune.unset [EO_OUTBOUND_PARALLEL/WMS] value 0",
		"tune.unset [EO_INBOUND_PARALLEL/CENTRAL] value 0",
	}, log)
}

func testTuneInvalid(t *testing.T, b *bundle) {
	for name, c := range map[string]struct {
		param, sub string
		value      int
		msg        string
	}{
		"unknown param": {"EO_PARALLEL", "", 2, `parameter "EO_PARALLEL" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"lower param": {"eo_inbound_parallel", "CENTRAL", 2,
			`parameter "eo_inbound_parallel" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL (did you mean EO_INBOUND_PARALLEL?)`},
		"empty param":  {"", "", 2, `parameter "" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"no sub":       {eoInbound, "", 2, `EO_INBOUND_PARALLEL needs --sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not ""`},
		"bad sub":      {eoInbound, "central", 2, `EO_INBOUND_PARALLEL needs --sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not "central"`},
		"bad receiver": {eoOutbound, "W MS", 2, `--sub (a receiver name) "W MS" contains ' '; allowed are A-Z a-z 0-9 _ - .`},
		"too big":      {eoOutbound, "", 10000, "value 10000 for EO_OUTBOUND_PARALLEL must be from 1 to 9999"},
		"negative":     {eoOutbound, "WMS", -1, "value -1 for EO_OUTBOUND_PARALLEL must be from 1 to 9999"},
		"unset bad":    {"NOPE", "", 0, `parameter "NOPE" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"dot-dot":      {"..", "", 2, `parameter ".." is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"slashes":      {"EO_INBOUND_PARALLEL/../x", "", 0, `parameter "EO_INBOUND_PARALLEL/../x" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
	} {
		e, err := b.svc.Tune(b.ctx, c.param, c.sub, c.value)
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		require.EqualError(t, err, c.msg, name)
		require.Nil(t, e, name)
	}

	// Nothing changed, and every refusal is in the audit log.
	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Len(t, entries, 4)
	for _, e := range entries {
		require.False(t, e.Set)
	}
	log := b.auditLog(t, admin.AuditFilter{})
	require.Len(t, log, 11)
	for _, a := range log {
		require.Equal(t, domain.AuditError, a.Result)
		require.Contains(t, []string{"tune.set", "tune.unset"}, a.Action)
	}
}

func testAudit(t *testing.T, b *bundle) {
	start := time.Now().Add(-time.Second)
	msgs := b.send(t, eo("a"), eo("b"))
	wait := b.wait(t, msgs[0].ID)
	b.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{wait.ID, msgs[1].ID}})
	_, err := b.svc.Tune(b.ctx, eoOutbound, "", 3)
	require.NoError(t, err)
	b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTI0000"}, Reason: "maintenance"})

	log := b.auditLog(t, admin.AuditFilter{})
	require.Len(t, log, 3)
	resend, tune, stop := log[0], log[1], log[2]

	require.Equal(t, string(admin.ActResend), resend.Action)
	require.Equal(t, []string{wait.ID, msgs[1].ID}, resend.Targets)
	require.Equal(t, domain.AuditConflict, resend.Result, "one target was skipped")
	require.Contains(t, resend.Detail, "changed 1, skipped 1, not found 0")
	require.Equal(t, "tune.set", tune.Action)
	require.Equal(t, domain.AuditOK, tune.Result)
	require.Equal(t, []string{"XBTI0000"}, stop.Targets)
	require.Equal(t, "reason: maintenance", stop.Detail)

	// The audit log and the history name the same actor; the source is set.
	m, err := b.svc.Message(b.ctx, wait.ID)
	require.NoError(t, err)
	actor := m.History[len(m.History)-1].Actor
	for i, e := range log {
		require.Equal(t, actor, e.Actor)
		require.NotEmpty(t, e.Source)
		require.False(t, e.At.Before(start))
		require.Greater(t, e.Seq, uint64(0))
		if i > 0 {
			require.Greater(t, e.Seq, log[i-1].Seq)
		}
	}

	require.Equal(t, log, b.auditLog(t, admin.AuditFilter{Actor: actor}))
	require.Empty(t, b.auditLog(t, admin.AuditFilter{Actor: "somebody-else"}))
	require.Equal(t, log[1:], b.auditLog(t, admin.AuditFilter{AfterSeq: log[0].Seq}))
	require.Equal(t, log[:2], b.auditLog(t, admin.AuditFilter{Limit: 2}))
	require.Equal(t, log, b.auditLog(t, admin.AuditFilter{Since: start}))
	require.Empty(t, b.auditLog(t, admin.AuditFilter{Since: time.Now().Add(time.Hour)}))
}

func testAuditPaging(t *testing.T, b *bundle) {
	// More entries than one page of the HTTP API holds: each stop of a
	// queue that does not exist is one audited batch.
	const n = 1010
	for i := range n {
		b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{fmt.Sprintf("XBQIQ%04d", i)}})
	}
	log := b.auditLog(t, admin.AuditFilter{})
	require.Len(t, log, n)
	for i, e := range log {
		require.Equal(t, []string{fmt.Sprintf("XBQIQ%04d", i)}, e.Targets)
	}
	require.Equal(t, log[:1005], b.auditLog(t, admin.AuditFilter{Limit: 1005}))
	require.Equal(t, log[3:], b.auditLog(t, admin.AuditFilter{AfterSeq: log[2].Seq}))
}

func testPurge(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	res := b.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{f.ndlv.ID}})
	require.Equal(t, 1, res.Changed)
	cutoff := time.Now().Add(time.Hour)
	before := b.messages(t, admin.MessageFilter{})
	audit := b.auditLog(t, admin.AuditFilter{})

	dry, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: cutoff, FailedBefore: cutoff, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 1, domain.StatusFAIL: 1}, DryRun: true}, dry)
	require.Equal(t, ids(before), ids(b.messages(t, admin.MessageFilter{})), "a dry run deletes nothing")
	require.Len(t, b.auditLog(t, admin.AuditFilter{}), len(audit))

	// A cutoff in the past purges nothing; a missing one leaves its status alone.
	none, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	require.Equal(t, &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 0}}, none)

	got, err := b.svc.Purge(b.ctx, admin.PurgeParams{DeliveredBefore: cutoff, FailedBefore: cutoff})
	require.NoError(t, err)
	require.Equal(t, &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 1, domain.StatusFAIL: 1}}, got)
	_, err = b.svc.Message(b.ctx, f.dlvd.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.svc.Message(b.ctx, f.ndlv.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.Len(t, b.messages(t, admin.MessageFilter{}), len(before)-2)
	for _, s := range []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD, domain.StatusPEND, domain.StatusTBDL} {
		require.NotEmpty(t, b.messages(t, admin.MessageFilter{Statuses: []domain.Status{s}}), "%s is never purged", s)
	}

	var purges []*domain.AuditEntry
	for _, e := range b.auditLog(t, admin.AuditFilter{}) {
		if e.Action == "purge" {
			purges = append(purges, e)
		}
	}
	require.Len(t, purges, 2)
	require.Equal(t, []string{f.dlvd.ID}, purges[0].Targets)
	require.Equal(t, []string{f.ndlv.ID}, purges[1].Targets)
}
