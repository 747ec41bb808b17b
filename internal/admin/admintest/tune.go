package admintest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

const (
	eoInbound  = "EO_INBOUND_PARALLEL"
	eoOutbound = "EO_OUTBOUND_PARALLEL"
)

// set and unset are the two shapes of a tuning change.
func set(param, sub, value string) admin.TuneParams {
	return admin.TuneParams{Param: param, Sub: sub, Value: value}
}

func unset(param, sub string) admin.TuneParams {
	return admin.TuneParams{Param: param, Sub: sub, Unset: true}
}

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
	e, err := b.svc.Tune(b.ctx, set(eoInbound, "CENTRAL", "8"))
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoInbound, Sub: "CENTRAL", Value: 8, Set: true, Queues: []string{first.Queue}}, e)

	e, err = b.svc.Tune(b.ctx, set(eoOutbound, "WMS", "9999"))
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoOutbound, Sub: "WMS", Value: 9999, Set: true, Queues: []string{}}, e)
	e, err = b.svc.Tune(b.ctx, set(eoOutbound, "WMS", "12"))
	require.NoError(t, err)
	require.Equal(t, 12, e.Value)

	entries, err = b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []admin.TuningEntry{
		{Param: eoInbound, Sub: "SENDER", Value: 1, Queues: []string{}},
		{Param: eoInbound, Sub: "CENTRAL", Value: 8, Set: true, Queues: []string{first.Queue}},
		{Param: eoInbound, Sub: "RECEIVER", Value: 1, Queues: []string{}},
		{Param: eoOutbound, Sub: "", Value: 1, Queues: []string{}},
		{Param: eoOutbound, Sub: "WMS", Value: 12, Set: true, Queues: []string{}},
	}, entries)

	// Unset: the default applies again, the receiver's own entry is gone.
	e, err = b.svc.Tune(b.ctx, unset(eoOutbound, "WMS"))
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoOutbound, Sub: "", Value: 1, Queues: []string{}}, e)
	e, err = b.svc.Tune(b.ctx, unset(eoInbound, "CENTRAL"))
	require.NoError(t, err)
	require.Equal(t, &admin.TuningEntry{Param: eoInbound, Sub: "CENTRAL", Value: 1, Queues: []string{first.Queue}}, e)

	var log []string
	for _, a := range b.auditLog(t, admin.AuditFilter{OldestFirst: true}) {
		require.Equal(t, domain.AuditOK, a.Result)
		log = append(log, fmt.Sprint(a.Action, " ", a.Targets, " ", a.Detail))
	}
	require.Equal(t, []string{
		"tune.set [EO_INBOUND_PARALLEL/CENTRAL] value 8",
		"tune.set [EO_OUTBOUND_PARALLEL/WMS] value 9999",
		"tune.set [EO_OUTBOUND_PARALLEL/WMS] value 12 (was 9999)",
		"tune.unset [EO_OUTBOUND_PARALLEL/WMS] value 12 unset",
		"tune.unset [EO_INBOUND_PARALLEL/CENTRAL] value 8 unset",
	}, log)
}

func testTuneInvalid(t *testing.T, b *bundle) {
	for name, c := range map[string]struct {
		p   admin.TuneParams
		msg string
	}{
		"unknown param": {set("EO_PARALLEL", "", "2"), `parameter "EO_PARALLEL" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"mistyped param": {set("eo_inbound_paralel", "CENTRAL", "2"),
			`parameter "eo_inbound_paralel" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL (did you mean EO_INBOUND_PARALLEL?)`},
		"empty param": {set("", "", "2"), `parameter "" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"no sub":      {set(eoInbound, "", "2"), `EO_INBOUND_PARALLEL needs --sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not ""`},
		"bad sub": {set(eoInbound, "centrl", "2"),
			`EO_INBOUND_PARALLEL needs --sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not "centrl" (did you mean CENTRAL?)`},
		"unconfigured receiver": {set(eoOutbound, "wms", "2"),
			"EO_OUTBOUND_PARALLEL --sub wms: no receiver wms is configured (did you mean WMS?); nothing was changed"},
		"mistyped receiver": {set(eoOutbound, "ARCHVE", "2"),
			"EO_OUTBOUND_PARALLEL --sub ARCHVE: no receiver ARCHVE is configured (did you mean ARCHIVE?); nothing was changed"},
		"bad receiver": {set(eoOutbound, "W MS", "2"),
			"EO_OUTBOUND_PARALLEL --sub W MS: no receiver W MS is configured (did you mean WMS?); nothing was changed"},
		"zero":         {set(eoOutbound, "", "0"), "value 0 for EO_OUTBOUND_PARALLEL is out of range: values are 1 to 9999; nothing was changed"},
		"too big":      {set(eoOutbound, "", "10000"), "value 10000 for EO_OUTBOUND_PARALLEL must be from 1 to 9999; nothing was changed"},
		"negative":     {set(eoOutbound, "WMS", "-1"), `value "-1" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"space":        {set(eoOutbound, "WMS", " 2"), `value " 2" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"plus":         {set(eoOutbound, "WMS", "+3"), `value "+3" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"leading zero": {set(eoOutbound, "WMS", "03"), `value "03" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"not a number": {set(eoOutbound, "WMS", "many"), `value "many" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"no value":     {set(eoOutbound, "WMS", ""), `value "" for EO_OUTBOUND_PARALLEL is not a whole number from 1 to 9999; nothing was changed`},
		"unset bad":    {unset("NOPE", ""), `parameter "NOPE" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"dot-dot":      {set("..", "", "2"), `parameter ".." is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"slashes":      {unset("EO_INBOUND_PARALLEL/../x", ""), `parameter "EO_INBOUND_PARALLEL/../x" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
	} {
		e, err := b.svc.Tune(b.ctx, c.p)
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		requireWords(t, err, c.msg, name)
		require.Nil(t, e, name)
	}

	// Nothing changed, and every refusal is in the audit log as an error.
	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Len(t, entries, 4)
	for _, e := range entries {
		require.False(t, e.Set)
	}
	log := b.auditLog(t, admin.AuditFilter{})
	require.Len(t, log, 19)
	for _, a := range log {
		require.Equal(t, domain.AuditError, a.Result)
		require.Contains(t, []string{"tune.set", "tune.unset"}, a.Action)
	}
}

// testTuneKeywordCase: parameter names and node-role subparameters are
// keywords, matched in any case like statuses and qos, and stored, shown
// and audited in the case queuectl writes them; a receiver is a name, and
// must be given as configured.
func testTuneKeywordCase(t *testing.T, b *bundle) {
	e, err := b.svc.Tune(b.ctx, set("eo_inbound_parallel", "central", "2"))
	require.NoError(t, err)
	require.Equal(t, eoInbound, e.Param)
	require.Equal(t, "CENTRAL", e.Sub)
	require.Equal(t, 2, e.Value)
	e, err = b.svc.Tune(b.ctx, set("Eo_Outbound_Parallel", "WMS", "3"))
	require.NoError(t, err)
	require.Equal(t, eoOutbound, e.Param)
	e, err = b.svc.Tune(b.ctx, unset("eo_outbound_parallel", "WMS"))
	require.NoError(t, err)
	require.Equal(t, eoOutbound, e.Param)
	_, err = b.svc.Tune(b.ctx, set(eoOutbound, "wms", "3"))
	require.ErrorIs(t, err, domain.ErrInvalid, "a receiver's name keeps its case")
	var targets []string
	for _, a := range b.auditLog(t, admin.AuditFilter{OldestFirst: true, Result: domain.AuditOK}) {
		targets = append(targets, a.Targets...)
	}
	require.Equal(t, []string{"EO_INBOUND_PARALLEL/CENTRAL", "EO_OUTBOUND_PARALLEL/WMS", "EO_OUTBOUND_PARALLEL/WMS"}, targets)
}

// testTuneStoredReceiver: a receiver this configuration does not name but
// that has a value in the store (set where it is configured) can be given
// another; one without a value is still refused.
func testTuneStoredReceiver(t *testing.T, b *bundle) {
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		return w.SetParam(domain.Param{Name: eoOutbound, Sub: "LEGACY", Value: 3})
	}))
	e, err := b.svc.Tune(b.ctx, set(eoOutbound, "LEGACY", "5"))
	require.NoError(t, err)
	require.Equal(t, 5, e.Value)
	_, err = b.svc.Tune(b.ctx, set(eoOutbound, "LEGACY2", "5"))
	require.ErrorIs(t, err, domain.ErrInvalid)
}

// testTuneUnsetNotSet: unsetting a value that is not set is not found
// (exit 3), changes nothing and is audited as a conflict.
func testTuneUnsetNotSet(t *testing.T, b *bundle) {
	_, err := b.svc.Tune(b.ctx, unset(eoOutbound, "NOPE"))
	require.ErrorIs(t, err, domain.ErrNotFound)
	requireWords(t, err, "EO_OUTBOUND_PARALLEL --sub NOPE is not set; nothing to unset")
	require.Equal(t, "no value of EO_OUTBOUND_PARALLEL is set: the default, 1, applies", domain.HintOf(err))

	_, err = b.svc.Tune(b.ctx, set(eoOutbound, "WMS", "4"))
	require.NoError(t, err)
	_, err = b.svc.Tune(b.ctx, unset(eoOutbound, "wms"))
	require.ErrorIs(t, err, domain.ErrNotFound)
	requireWords(t, err, "EO_OUTBOUND_PARALLEL --sub wms is not set; nothing to unset (did you mean WMS?)")
	require.Equal(t, "the values set: WMS (queuectl tune list)", domain.HintOf(err))
	_, err = b.svc.Tune(b.ctx, unset(eoInbound, "SENDER"))
	require.ErrorIs(t, err, domain.ErrNotFound)

	var results []string
	for _, a := range b.auditLog(t, admin.AuditFilter{OldestFirst: true}) {
		results = append(results, a.Action+" "+a.Result)
	}
	require.Equal(t, []string{"tune.unset conflict", "tune.set ok", "tune.unset conflict", "tune.unset conflict"}, results)
}

func testAudit(t *testing.T, b *bundle) {
	start := time.Now().Add(-time.Second)
	msgs := b.send(t, eo("a"), eo("b"))
	wait := b.wait(t, msgs[0].ID)
	b.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{wait.ID, msgs[1].ID}})
	_, err := b.svc.Tune(b.ctx, set(eoOutbound, "", "3"))
	require.NoError(t, err)
	b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTI0000"}, Reason: "maintenance"})

	log := b.auditLog(t, admin.AuditFilter{OldestFirst: true})
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

	// Newest first by default; every filter works in both orders.
	newest := slices.Clone(log)
	slices.Reverse(newest)
	require.Equal(t, newest, b.auditLog(t, admin.AuditFilter{}))
	for _, oldest := range []bool{true, false} {
		order := log
		if !oldest {
			order = newest
		}
		f := func(f admin.AuditFilter) admin.AuditFilter { f.OldestFirst = oldest; return f }
		require.Equal(t, order, b.auditLog(t, f(admin.AuditFilter{Actor: actor})))
		require.Empty(t, b.auditLog(t, f(admin.AuditFilter{Actor: "somebody-else"})))
		require.Equal(t, order[1:], b.auditLog(t, f(admin.AuditFilter{After: order[0].Seq})), "the cursor goes on in the list's order")
		require.Equal(t, order[:2], b.auditLog(t, f(admin.AuditFilter{Limit: 2})))
		require.Equal(t, order, b.auditLog(t, f(admin.AuditFilter{Since: start})))
		require.Empty(t, b.auditLog(t, f(admin.AuditFilter{Since: time.Now().Add(time.Hour)})))
		require.Equal(t, []*domain.AuditEntry{tune}, b.auditLog(t, f(admin.AuditFilter{Action: "tune.set"})))
		require.Equal(t, []*domain.AuditEntry{resend}, b.auditLog(t, f(admin.AuditFilter{Result: domain.AuditConflict})))
		require.Empty(t, b.auditLog(t, f(admin.AuditFilter{Action: "tune.set", Result: domain.AuditConflict})))
	}
	err = b.svc.Audit(b.ctx, admin.AuditFilter{Result: "failed"}, func(*domain.AuditEntry) error { return nil })
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.EqualError(t, err, `audit result "failed" is not one of ok, conflict, denied, error`)
}

func testAuditPaging(t *testing.T, b *bundle) {
	// More entries than one page of the HTTP API holds: each stop of a
	// queue that does not exist is one audited batch.
	const n = 1010
	for i := range n {
		b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{fmt.Sprintf("XBQIQ%04d", i)}})
	}
	log := b.auditLog(t, admin.AuditFilter{OldestFirst: true})
	require.Len(t, log, n)
	for i, e := range log {
		require.Equal(t, []string{fmt.Sprintf("XBQIQ%04d", i)}, e.Targets)
	}
	require.Equal(t, log[:1005], b.auditLog(t, admin.AuditFilter{OldestFirst: true, Limit: 1005}))
	require.Equal(t, log[3:], b.auditLog(t, admin.AuditFilter{OldestFirst: true, After: log[2].Seq}))

	// Newest first, across windows and pages.
	newest := slices.Clone(log)
	slices.Reverse(newest)
	require.Equal(t, newest, b.auditLog(t, admin.AuditFilter{}))
	require.Equal(t, newest[:1005], b.auditLog(t, admin.AuditFilter{Limit: 1005}))
	require.Equal(t, newest[3:], b.auditLog(t, admin.AuditFilter{After: newest[2].Seq}))
	require.Equal(t, newest[700:710], b.auditLog(t, admin.AuditFilter{After: newest[699].Seq, Limit: 10}))
	require.Equal(t, []*domain.AuditEntry{log[0]}, b.auditLog(t, admin.AuditFilter{After: log[1].Seq}))
	require.Empty(t, b.auditLog(t, admin.AuditFilter{After: log[0].Seq}))
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
	for _, e := range b.auditLog(t, admin.AuditFilter{OldestFirst: true}) {
		if e.Action == "purge" {
			purges = append(purges, e)
		}
	}
	require.Len(t, purges, 2)
	require.Equal(t, []string{f.dlvd.ID}, purges[0].Targets)
	require.Equal(t, []string{f.ndlv.ID}, purges[1].Targets)
}
