package local_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

func TestTuningDefaults(t *testing.T) {
	t.Parallel()

	b := setup(t)
	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []admin.TuningEntry{
		{Param: placement.ParamEOInbound, Sub: "SENDER", Value: 1, Queues: []string{}},
		{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: 1, Queues: []string{}},
		{Param: placement.ParamEOInbound, Sub: "RECEIVER", Value: 1, Queues: []string{}},
		{Param: placement.ParamEOOutbound, Sub: "", Value: 1, Queues: []string{}},
	}, entries, "every inbound subparameter and the outbound default, unset")
}

func TestTuningListsValuesWithTheirQueues(t *testing.T) {
	t.Parallel()

	b := setup(t)
	first := b.sendOne(t, eo("before"))
	e, err := b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: "8"})
	require.NoError(t, err)
	require.Equal(t, admin.TuningEntry{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: 8, Set: true,
		Queues: []string{"XBTI0000"}}, *e)
	second := b.sendOne(t, eo("after"))
	require.Equal(t, "XBTI0007", second.Queue, "a change applies to messages sent after it")

	e, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "WMS", Value: "4"})
	require.NoError(t, err)
	require.Equal(t, 4, e.Value)
	wms := b.outbound(t, first, "WMS")
	archive := b.outbound(t, first, "ARCHIVE")
	b.sendOne(t, eoio("ORDERS", "EOIO queues are not tuned"))
	sender := local.New(b.st, local.Options{Role: domain.RoleSender, Rand: func(int) int { return 0 }})
	_, err = sender.Send(b.ctx, []domain.SendRequest{eo("from a sender node")})
	require.NoError(t, err)

	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []admin.TuningEntry{
		{Param: placement.ParamEOInbound, Sub: "SENDER", Value: 1, Queues: []string{"XBTS0000"}},
		{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: 8, Set: true, Queues: []string{"XBTI0000", "XBTI0007"}},
		{Param: placement.ParamEOInbound, Sub: "RECEIVER", Value: 1, Queues: []string{}},
		{Param: placement.ParamEOOutbound, Sub: "", Value: 1, Queues: []string{archive.Queue}},
		{Param: placement.ParamEOOutbound, Sub: "WMS", Value: 4, Set: true, Queues: []string{wms.Queue}},
	}, entries)

	var actions []string
	for _, a := range b.auditLog(t) {
		require.Equal(t, domain.AuditOK, a.Result)
		actions = append(actions, a.Action+" "+a.Targets[0]+" "+a.Detail)
	}
	require.Equal(t, []string{
		"tune.set EO_INBOUND_PARALLEL/CENTRAL value 8",
		"tune.set EO_OUTBOUND_PARALLEL/WMS value 4",
	}, actions)
}

func TestTuneUnset(t *testing.T) {
	t.Parallel()

	b := setup(t)
	_, err := b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: "9999"})
	require.NoError(t, err, "9999 is the largest value")
	e, err := b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOInbound, Sub: "CENTRAL", Unset: true})
	require.NoError(t, err)
	require.Equal(t, admin.TuningEntry{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: 1, Queues: []string{}}, *e,
		"value 0 unsets: the default applies again")

	_, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "WMS", Value: "3"})
	require.NoError(t, err)
	e, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "WMS", Unset: true})
	require.NoError(t, err)
	require.Equal(t, 1, e.Value, "WMS falls back to the value for all receivers")
	require.False(t, e.Set)

	_, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "NEVER_SET", Unset: true})
	require.ErrorIs(t, err, domain.ErrNotFound, "unsetting what is not set says so (exit 3)")

	entries, err := b.svc.Tuning(b.ctx)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no value is left set")
	var actions []string
	for _, a := range b.auditLog(t) {
		actions = append(actions, a.Action+" "+a.Result)
	}
	require.Equal(t, []string{"tune.set ok", "tune.unset ok", "tune.set ok", "tune.unset ok", "tune.unset conflict"}, actions)
}

func TestTuneValidation(t *testing.T) {
	t.Parallel()

	set := func(param, sub, value string) admin.TuneParams {
		return admin.TuneParams{Param: param, Sub: sub, Value: value}
	}
	tests := []struct {
		name    string
		p       admin.TuneParams
		wantErr string
	}{
		{"unknown parameter", set("EO_PARALLEL", "", "2"), `parameter "EO_PARALLEL" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		{"mistyped parameter", set("eo_inbound_paralel", "CENTRAL", "2"), "did you mean EO_INBOUND_PARALLEL?"},
		{"mistyped outbound parameter", set("Eo_Outbond_Parallel", "", "2"), "did you mean EO_OUTBOUND_PARALLEL?"},
		{"inbound without sub", set(placement.ParamEOInbound, "", "2"), "needs sub SENDER, CENTRAL or RECEIVER"},
		{"inbound mistyped sub", set(placement.ParamEOInbound, "centrl", "2"), `not "centrl" (did you mean CENTRAL?)`},
		{"inbound receiver name as sub", set(placement.ParamEOInbound, "WMS", "2"), `not "WMS"`},
		{"outbound unconfigured receiver", set(placement.ParamEOOutbound, "wms", "2"), "no receiver wms is configured (did you mean WMS?)"},
		{"outbound receiver too long", set(placement.ParamEOOutbound, strings.Repeat("W", 61), "2"), "is configured"},
		{"zero", set(placement.ParamEOOutbound, "", "0"), "value 0 for EO_OUTBOUND_PARALLEL is out of range"},
		{"too large", set(placement.ParamEOOutbound, "", "10000"), "value 10000 for EO_OUTBOUND_PARALLEL must be from 1 to 9999"},
		{"negative", set(placement.ParamEOInbound, "CENTRAL", "-1"), `value "-1" for EO_INBOUND_PARALLEL is not a whole number from 1 to 9999`},
		{"leading space", set(placement.ParamEOInbound, "CENTRAL", " 2"), `value " 2" for EO_INBOUND_PARALLEL is not a whole number`},
		{"plus sign", set(placement.ParamEOInbound, "CENTRAL", "+3"), `value "+3" for EO_INBOUND_PARALLEL is not a whole number`},
		{"leading zero", set(placement.ParamEOInbound, "CENTRAL", "03"), `value "03" for EO_INBOUND_PARALLEL is not a whole number`},
		{"not a number", set(placement.ParamEOInbound, "CENTRAL", "2.5"), `value "2.5" for EO_INBOUND_PARALLEL is not a whole number`},
		{"bad parameter for unset", admin.TuneParams{Param: "NOPE", Unset: true}, `parameter "NOPE"`},
		{"unset with a value", admin.TuneParams{Param: placement.ParamEOOutbound, Value: "3", Unset: true}, `takes no value, not "3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t)
			_, err := b.svc.Tune(b.ctx, set(placement.ParamEOOutbound, "WMS", "5"))
			require.NoError(t, err)
			before := b.snapshot(t)

			_, err = b.svc.Tune(b.ctx, tt.p)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.wantErr)
			require.Equal(t, before, b.snapshot(t), "nothing changes")

			entries := b.auditLog(t)
			require.Len(t, entries, 2, "the refusal is audited")
			e := entries[1]
			require.Equal(t, domain.AuditError, e.Result)
			require.Equal(t, []string{tt.p.Param + "/" + tt.p.Sub}, e.Targets)
			require.Equal(t, err.Error(), e.Detail)
			want := "tune.set"
			if tt.p.Unset {
				want = "tune.unset"
			}
			require.Equal(t, want, e.Action)
		})
	}
}

// TestTuneNoReceiversConfigured: with no receiver configured, a receiver's
// own value is refused, and the hint says where receivers are configured.
func TestTuneNoReceiversConfigured(t *testing.T) {
	t.Parallel()

	b := setup(t)
	svc := local.New(b.st, local.Options{})
	_, err := svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "WMS", Value: "4"})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.EqualError(t, err, "EO_OUTBOUND_PARALLEL sub WMS: no receiver WMS is configured; nothing was changed")
	require.Contains(t, domain.HintOf(err), "no receivers are configured")
	_, err = svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Value: "4"})
	require.NoError(t, err, "the value for all receivers needs none")
}

func TestAuditFilters(t *testing.T) {
	t.Parallel()

	b := setup(t)
	_, err := b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "", Value: "2"})
	require.NoError(t, err)
	b.now = b.now.Add(time.Hour)
	other := local.New(b.st, local.Options{Actor: "ops", Now: func() time.Time { return b.now }})
	_, err = other.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "", Value: "3"})
	require.NoError(t, err)
	_, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "", Value: "4"})
	require.NoError(t, err)

	collect := func(f admin.AuditFilter) []string {
		var out []string
		require.NoError(t, b.svc.Audit(b.ctx, f, func(e *domain.AuditEntry) error {
			out = append(out, e.Actor+" "+e.Detail)
			return nil
		}))
		return out
	}
	require.Equal(t, []string{"local:test value 4 (was 3)", "ops value 3 (was 2)", "local:test value 2"}, collect(admin.AuditFilter{}), "newest first")
	require.Equal(t, []string{"local:test value 2", "ops value 3 (was 2)", "local:test value 4 (was 3)"}, collect(admin.AuditFilter{OldestFirst: true}))
	require.Equal(t, []string{"ops value 3 (was 2)"}, collect(admin.AuditFilter{Actor: "ops"}))
	require.Equal(t, []string{"local:test value 4 (was 3)", "ops value 3 (was 2)"}, collect(admin.AuditFilter{Since: b.now}))
	require.Equal(t, []string{"local:test value 4 (was 3)"}, collect(admin.AuditFilter{Limit: 1}))
	require.Equal(t, []string{"local:test value 4 (was 3)"}, collect(admin.AuditFilter{OldestFirst: true, After: 2}))
	require.Equal(t, []string{"local:test value 2"}, collect(admin.AuditFilter{After: 2}))
}
