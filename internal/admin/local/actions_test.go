package local_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// actionRule is what one message action does, written out from §4 and §5
// rather than taken from the code under test.
type actionRule struct {
	action admin.Action
	from   []domain.Status
	to     domain.Status // "" deletes the message
	// needs is how a skip reason names what the action needs.
	needs string
	// blacklistedOnly limits the action to blacklisted messages; hint is
	// the command a skip reason points to for the others.
	blacklistedOnly bool
	hint            string
	// leavesBlacklisted: the action skips blacklisted messages (a resend
	// without IncludeBlacklisted).
	leavesBlacklisted bool
}

var actionRules = []actionRule{
	{action: admin.ActResend, from: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, to: domain.StatusTBDL, needs: "NDLV or WAIT",
		leavesBlacklisted: true, hint: "blacklist release"},
	{action: admin.ActFail, from: []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}, to: domain.StatusFAIL, needs: "NDLV, WAIT or HOLD"},
	{action: admin.ActRelease, from: []domain.Status{domain.StatusNDLV}, to: domain.StatusTBDL, needs: "a blacklisted NDLV message",
		blacklistedOnly: true, hint: "message resend"},
	{action: admin.ActBlacklistFail, from: []domain.Status{domain.StatusNDLV}, to: domain.StatusFAIL, needs: "a blacklisted NDLV message",
		blacklistedOnly: true, hint: "message fail"},
	{action: admin.ActCommit, from: []domain.Status{domain.StatusPEND}, to: domain.StatusTBDL, needs: "PEND"},
	{action: admin.ActRollback, from: []domain.Status{domain.StatusPEND}, needs: "PEND"},
}

func TestActStatusMatrix(t *testing.T) {
	t.Parallel()

	for _, rule := range actionRules {
		t.Run(string(rule.action), func(t *testing.T) {
			t.Parallel()

			f := setupStatuses(t)
			var targets []string
			for _, s := range domain.Statuses {
				targets = append(targets, f.byStatus[s].ID)
			}
			targets = append(targets, f.blacklisted.ID)
			before := map[string]*domain.Message{}
			for _, id := range targets {
				before[id] = f.message(t, id)
			}

			res := f.act(t, admin.ActParams{Action: rule.action, Targets: targets})

			var wantChanged []string
			var wantSkipped []domain.Status
			for _, id := range targets {
				m := before[id]
				allowed := slices.Contains(rule.from, m.Status) && (!rule.blacklistedOnly || m.Blacklisted) &&
					(!rule.leavesBlacklisted || !m.Blacklisted)
				after := f.message(t, id)
				if !allowed {
					wantSkipped = append(wantSkipped, m.Status)
					require.Equal(t, m, after, "a skipped message is left as it was")
					continue
				}
				wantChanged = append(wantChanged, id)
				if rule.to == "" {
					require.Nil(t, after, "%s deletes the message", rule.action)
					continue
				}
				require.Equal(t, rule.to, after.Status, "%s of a %s message", rule.action, m.Status)
				last := after.History[len(after.History)-1]
				require.Equal(t, m.Status, last.From)
				require.Equal(t, "local:test", last.Actor)
				require.Contains(t, last.Reason, string(rule.action)+" by local:test")
			}
			require.Equal(t, len(wantChanged), res.Changed)
			require.Equal(t, wantChanged, res.ChangedIDs, "changed in target order")
			require.Empty(t, res.NotFound)
			require.False(t, res.DryRun)

			got := make([]domain.Status, len(res.Skipped))
			for i, sk := range res.Skipped {
				got[i] = sk.Status
				m := before[sk.ID]
				require.NotNil(t, m, "skipped id %s is a target", sk.ID)
				require.Equal(t, m.Status, sk.Status)
				if m.Blacklisted && rule.leavesBlacklisted {
					require.Contains(t, sk.Reason, "blacklisted after")
					require.Contains(t, sk.Reason, rule.hint)
					continue
				}
				require.Contains(t, sk.Reason, "status is "+string(m.Status), "the reason names the current status")
				require.Contains(t, sk.Reason, string(rule.action)+" needs "+rule.needs, "the reason names the needed ones")
				if m.Status == domain.StatusNDLV && rule.blacklistedOnly {
					require.Contains(t, sk.Reason, "not blacklisted")
					require.Contains(t, sk.Reason, rule.hint)
				}
			}
			require.Equal(t, wantSkipped, got, "skipped in target order")
			require.Equal(t, f.recount(t), f.counters(t), "counters follow every change")
		})
	}
}

func TestActFieldsAfterFail(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	wait := f.byStatus[domain.StatusWAIT]
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{wait.ID}, Reason: "wrong customer"})
	require.Equal(t, 1, res.Changed)

	m := f.message(t, wait.ID)
	require.Equal(t, domain.StatusFAIL, m.Status)
	require.Equal(t, domain.ErrorAdmin, m.ErrorClass)
	require.Equal(t, "failed by local:test: wrong customer", m.Error)
	require.Nil(t, m.NextAttemptAt, "a failed message has no next attempt")
	require.Equal(t, "message.fail by local:test: wrong customer", m.History[len(m.History)-1].Reason)
	require.Equal(t, f.now, m.UpdatedAt)
}

func TestActResendStartsAfresh(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	wait, crashed := f.byStatus[domain.StatusWAIT], f.blacklisted
	res := f.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{wait.ID, crashed.ID}, IncludeBlacklisted: true})
	require.Equal(t, []string{wait.ID, crashed.ID}, res.ChangedIDs)
	require.Equal(t, 1, res.BlacklistedChanged)

	for _, id := range res.ChangedIDs {
		m := f.message(t, id)
		require.Equal(t, domain.StatusTBDL, m.Status)
		require.Zero(t, m.Attempts, "all retries again")
		require.Nil(t, m.NextAttemptAt)
		require.Empty(t, m.Node)
		require.Zero(t, m.Crashes, "resend of a blacklisted message releases it")
		require.False(t, m.Blacklisted)
	}
}

func TestActReleaseBlacklisted(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	res := f.act(t, admin.ActParams{Action: admin.ActRelease, Targets: []string{f.blacklisted.ID}})
	require.Equal(t, 1, res.Changed)
	m := f.message(t, f.blacklisted.ID)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Crashes, "release resets crashes (§4)")
	require.False(t, m.Blacklisted)
	require.Zero(t, m.Attempts)
	require.Empty(t, m.Error, "a released message has no current error: its history keeps the blacklisting")
	require.Empty(t, m.ErrorClass)

	// Released, it is no longer blacklisted: a second release is skipped.
	res = f.act(t, admin.ActParams{Action: admin.ActRelease, Targets: []string{f.blacklisted.ID}})
	require.Zero(t, res.Changed)
	require.Len(t, res.Skipped, 1)
	require.Equal(t, domain.StatusTBDL, res.Skipped[0].Status)
}

func TestActBlacklistFail(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	res := f.act(t, admin.ActParams{Action: admin.ActBlacklistFail, Targets: []string{f.blacklisted.ID}, Reason: "poison"})
	require.Equal(t, 1, res.Changed)
	m := f.message(t, f.blacklisted.ID)
	require.Equal(t, domain.StatusFAIL, m.Status)
	require.Equal(t, domain.ErrorAdmin, m.ErrorClass)
	require.Equal(t, "failed by local:test: poison", m.Error)
}

func TestActNotFound(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	missing := domain.NewID()
	ndlv := f.byStatus[domain.StatusNDLV].ID
	res := f.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{missing, ndlv}})
	require.Equal(t, []string{missing}, res.NotFound)
	require.Equal(t, []string{ndlv}, res.ChangedIDs)
	require.Empty(t, res.Skipped)

	entries := f.auditLog(t)
	require.Len(t, entries, 1)
	require.Equal(t, domain.AuditConflict, entries[0].Result, "not every target changed")
	require.Contains(t, entries[0].Detail, "changed 1, skipped 0, not found 1")
}

func TestActDuplicatesCountOnce(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	id := f.byStatus[domain.StatusNDLV].ID
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{id, id, strings.ToUpper(id)}})
	require.Equal(t, 1, res.Changed)
	require.Equal(t, []string{id}, res.ChangedIDs)
	require.Empty(t, res.Skipped, "a repeated id is not skipped as already FAIL")

	m := f.message(t, id)
	require.Equal(t, 1, countTo(m.History, domain.StatusFAIL), "one change, one history entry")
	entries := f.auditLog(t)
	require.Len(t, entries, 1)
	require.Equal(t, []string{id}, entries[0].Targets)
	require.Equal(t, domain.AuditOK, entries[0].Result)
}

func TestActUnknownAction(t *testing.T) {
	t.Parallel()

	f := setupStatuses(t)
	before := f.snapshot(t)
	_, err := f.svc.Act(f.ctx, admin.ActParams{Action: "message.delete", Targets: []string{f.byStatus[domain.StatusNDLV].ID}})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.Equal(t, before, f.snapshot(t))
}

// An action that names nothing is refused, and the refusal audited (an
// API request with "targets": null).
func TestActNoTargets(t *testing.T) {
	t.Parallel()

	f := setup(t)
	res, err := f.svc.Act(f.ctx, admin.ActParams{Action: admin.ActResend})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "message.resend names no targets")
	require.Nil(t, res)
	var entries []*domain.AuditEntry
	require.NoError(t, f.svc.Audit(f.ctx, admin.AuditFilter{}, func(e *domain.AuditEntry) error {
		entries = append(entries, e)
		return nil
	}))
	require.Len(t, entries, 1)
	require.Equal(t, domain.AuditError, entries[0].Result)
	require.Equal(t, "message.resend", entries[0].Action)
}

func countTo(h []domain.HistoryEntry, s domain.Status) int {
	n := 0
	for _, e := range h {
		if e.To == s {
			n++
		}
	}
	return n
}

// failingUpdates is a store whose writes all fail, as on a full disk.
type failingUpdates struct{ store.Store }

func (failingUpdates) Update(context.Context, func(store.Writer) error) error {
	return errors.New("disk full")
}

// TestRefusalWhoseAuditFails: a refusal that cannot be recorded says so,
// keeping its own kind (exit 2), so the operator learns the audit log lacks it.
func TestRefusalWhoseAuditFails(t *testing.T) {
	t.Parallel()

	b := setup(t)
	svc := local.New(failingUpdates{b.st}, local.Options{Actor: "local:test"})
	_, err := svc.Act(b.ctx, admin.ActParams{Action: admin.ActResend, Targets: []string{"not-an-id"}})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "nothing was changed (recording this refusal in the audit log failed: disk full)")
}
