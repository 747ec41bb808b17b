package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// TestMarksGoAfterAnAction: once an action on the marked rows succeeded,
// the marks are gone, so that the next key acts on the row under the
// cursor, not again on rows the action changed.
func TestMarksGoAfterAnAction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "ctrl+a")
	waitFor(t, tm, "2 marked")
	press(tm, "s")
	waitFor(t, tm, "Stop 2 queues")
	press(tm, "y")
	waitFor(t, tm, "stopped 2 queues")
	press(tm, "f")
	waitFor(t, tm, "enter: confirm")
	m := finish(t, tm)
	require.Empty(t, m.pages[viewQueues].marks)
	require.NotNil(t, m.pending)
	require.Contains(t, b.scrub(m.pending.dialog.Title), "Fail 1 message (00000000…0001) in XBQIINVOICES_FR",
		"the row under the cursor, not the two old marks")
}

// TestMarksStayAfterAFailedAction: an action the service refused leaves
// the marks, to try again.
func TestMarksStayAfterAFailedAction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(actDenied{b.svc}), 120, 24)
	press(tm, "ctrl+a", "s")
	waitFor(t, tm, "Stop 2 queues")
	press(tm, "y")
	waitFor(t, tm, "now read-only")
	m := finish(t, tm)
	require.Len(t, m.pages[viewQueues].marks, 2)
}

// TestHeaderNamesTargetAndRole: the first line says what the TUI acts on
// and as whom, as k9s does — for the owner of an embedded store, and for a
// token on a server.
func TestHeaderNamesTargetAndRole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	opts := options(b.svc)
	opts.Target = "store /var/lib/queuectl/queuectl.db"
	m := New(opts)
	require.Equal(t, "store /var/lib/queuectl/queuectl.db · as local, role admin", m.header())

	opts = remoteOptions(t, b, "operator")
	opts.Target = "context prod · server https://queuectl.example:7870"
	m = New(opts)
	m.width = 120
	require.Equal(t, "context prod · server https://queuectl.example:7870 · as ops-operator, role operator", m.header())
	m.width = 60
	require.Equal(t, "…ps://queuectl.example:7870 · as ops-operator, role operator", m.header(),
		"a narrow terminal keeps the end of the target, and the role")
	require.Equal(t, 60, ansi.StringWidth(m.header()))
}

// TestOperatorMayNotTune: an operator's e on a tuning value says that the
// role may not, and nothing reaches the server, so nothing is refused
// there; the key line offers neither e nor u.
func TestOperatorMayNotTune(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, remoteOptions(t, b, "operator"), 120, 24)
	press(tm, "4")
	waitFor(t, tm, "PARAM")
	press(tm, "e")
	waitFor(t, tm, "e: role operator may not run 'tune set'; it needs role admin")
	m := finish(t, tm)
	require.Nil(t, m.pending)
	require.False(t, m.readOnly, "an operator may act elsewhere")
	require.NotContains(t, m.hints(), "e edit")
	for _, e := range auditLog(t, b) {
		require.NotEqual(t, "ops-operator", e.Actor, "%+v", e)
	}
}

// TestTuningDialogRefusesWhatTuneRefuses: the dialog checks the typed
// value by the rule tune set applies, in the same words — 0 is refused,
// not an unset — and stays open to correct it; u unsets, as tune unset does.
func TestTuningDialogRefusesWhatTuneRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, want := b.svc.Tune(context.Background(), admin.TuneParams{Param: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: "0"})
	require.ErrorIs(t, want, domain.ErrInvalid)

	tm := start(t, options(b.svc), 120, 24)
	press(tm, "4")
	waitFor(t, tm, "PARAM")
	press(tm, "j", "j", "j", "j", "e")
	waitFor(t, tm, "Set EO_OUTBOUND_PARALLEL [WMS] (now 3)", "new value (1–9999): 3")
	press(tm, "backspace", "0")
	waitFor(t, tm, "value 0 for EO_OUTBOUND_PARALLEL is out of range")
	press(tm, "enter")
	waitFor(t, tm, "error: value 0 for")
	m := finish(t, tm)
	require.NotNil(t, m.pending, "the dialog stays open")
	require.Equal(t, want.Error(), m.pending.dialog.Lines[0])
	require.Equal(t, "error: "+want.Error(), "error: "+m.status.Text)
	dialog := strings.Join(m.pending.dialog.Lines, " ") + m.pending.dialog.Input.Prompt
	require.NotContains(t, dialog, "0 unsets")
	require.NotContains(t, dialog, "0 to unset")
	entries, err := b.svc.Tuning(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, entries[4].Value, "nothing changed")

	tm = start(t, options(b.svc), 120, 24)
	press(tm, "4")
	waitFor(t, tm, "PARAM")
	press(tm, "j", "j", "j", "j", "u")
	waitFor(t, tm, "Unset EO_OUTBOUND_PARALLEL [WMS] (now 3)?", "WMS follows EO_OUTBOUND_PARALLEL for all receivers")
	press(tm, "y")
	waitFor(t, tm, "EO_OUTBOUND_PARALLEL [WMS] unset: now 1")
	press(tm, "j", "u")
	waitFor(t, tm, "u: EO_OUTBOUND_PARALLEL is not set; nothing to unset")
	finish(t, tm)
	entries, err = b.svc.Tuning(context.Background())
	require.NoError(t, err)
	require.Len(t, entries, 4, "the value of WMS is gone")
}

// TestAuditEntryOpens: the Audit view has the detail of each entry, whole
// in the line under the table for the row under the cursor, and enter
// opens the entry: every field, each target, the detail.
func TestAuditEntryOpens(t *testing.T) {
	t.Parallel()
	b := setupFull(t)
	tm := start(t, options(b.svc), 200, 50)
	press(tm, "6")
	waitFor(t, tm, "DETAIL")
	press(tm, "j")
	waitFor(t, tm, "▸ token ops-monitor (role monitor) may not run 'message fail'")
	press(tm, "enter")
	waitFor(t, tm, "Audit entry 2", "Detail:")
	m := finish(t, tm)
	view := b.scrub(m.View())
	require.Contains(t, view, "result:          denied")
	require.Contains(t, view, "source:          127.0.0.1")
	require.Contains(t, view, "  token ops-monitor (role monitor) may not run 'message fail'")
	require.Equal(t, viewAuditEntry, m.view)
	_, _ = m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	require.Equal(t, viewAudit, m.view, "esc goes back to the list")
}
