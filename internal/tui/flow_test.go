package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// TestFailBlockedHead is the operator's main flow: open the blocked EOIO
// queue, fail its head through the dialog, and see the messages held
// behind it move on.
func TestFailBlockedHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "enter")
	waitFor(t, tm, "HOLD")
	press(tm, "f")
	waitFor(t, tm, "in XBQIINVOICES_FR: NDLV → FAIL?", "reason (optional):")
	press(tm, "enter")
	waitFor(t, tm, "TBDL")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))

	ctx := context.Background()
	head, err := b.svc.Message(ctx, b.head)
	require.NoError(t, err)
	require.Equal(t, domain.StatusFAIL, head.Status)
	for _, id := range b.behind {
		msg, err := b.svc.Message(ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.StatusTBDL, msg.Status, "message %s behind the failed head", id)
	}
}

// TestActionDialog shows the dialog of f over the blocked queues (two
// heads) and that cancelling it changes nothing.
func TestActionDialog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "ctrl+a", "f")
	waitFor(t, tm, "enter: confirm")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
	require.NotNil(t, m.pending)

	tm = start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "f")
	waitFor(t, tm, "enter: confirm")
	press(tm, "n", "esc")
	waitFor(t, tm, "cancelled; nothing changed")
	finish(t, tm)
	head, err := b.svc.Message(context.Background(), b.head)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNDLV, head.Status)
}

// TestStopQueue stops a queue through the dialog; the row shows STOPPED.
func TestStopQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "s")
	waitFor(t, tm, "Stop 1 queue (XBQIINVOICES_FR)?")
	press(tm, "y")
	waitFor(t, tm, "STOPPED")
	m := finish(t, tm)
	require.Contains(t, m.View(), "stopped 1 queue")
	q, err := b.svc.Queue(context.Background(), "XBQIINVOICES_FR")
	require.NoError(t, err)
	require.True(t, q.Stopped)
}

// TestEditTuning sets a tuning value through the edit dialog.
func TestEditTuning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "4")
	waitFor(t, tm, "PARAM")
	press(tm, "j", "e")
	waitFor(t, tm, "(now 1)")
	press(tm, "backspace", "4")
	waitFor(t, tm, "Change: EO_INBOUND_PARALLEL [CENTRAL] 1 → 4.")
	press(tm, "enter")
	waitFor(t, tm, "EO_INBOUND_PARALLEL [CENTRAL]: 1 → 4")
	finish(t, tm)
	entries, err := b.svc.Tuning(context.Background())
	require.NoError(t, err)
	for _, e := range entries {
		if e.Param == "EO_INBOUND_PARALLEL" && e.Sub == "CENTRAL" {
			require.Equal(t, 4, e.Value)
		}
	}
}

// growingQueues adds a queue from the second listing on, so a refresh shows.
type growingQueues struct {
	admin.Service
	calls atomic.Int32
}

func (g *growingQueues) Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	if err := g.Service.Queues(ctx, f, fn); err != nil {
		return err
	}
	if g.calls.Add(1) > 1 {
		return fn(&domain.Queue{Name: "XBTOZZZZ", QoS: domain.EO, Stage: domain.Outbound, State: domain.QueueEmpty})
	}
	return nil
}

// TestMarksSurviveRefresh marks a row, refreshes, and keeps mark and cursor.
func TestMarksSurviveRefresh(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(&growingQueues{Service: b.svc}), 120, 24)
	press(tm, "j", "space")
	waitFor(t, tm, "1 marked")
	press(tm, "k", "ctrl+r")
	waitFor(t, tm, "XBTOZZZZ")
	m := finish(t, tm)
	p := m.pages[viewQueues]
	require.Contains(t, p.marks, "XBQIRETURNS")
	require.Len(t, p.marks, 1)
	require.Equal(t, "XBQIINVOICES_FR", p.cursorKey)
	require.Equal(t, 0, p.cursor)
}

// TestFailReason: the fail dialog takes a reason, which the message's
// history records; a reason over the limit of 1 KiB (the input counts
// characters, the limit bytes) is refused and the dialog stays open to
// correct it.
func TestFailReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "f")
	waitFor(t, tm, "reason (optional):", "enter: confirm · esc: cancel")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("invoice booked by hand")})
	waitFor(t, tm, "invoice booked by hand")
	press(tm, "enter")
	waitFor(t, tm, "failed 1 message")
	finish(t, tm)
	head, err := b.svc.Message(context.Background(), b.head)
	require.NoError(t, err)
	require.Equal(t, domain.StatusFAIL, head.Status)
	last := head.History[len(head.History)-1]
	require.Equal(t, domain.StatusFAIL, last.To)
	require.Contains(t, last.Reason, "invoice booked by hand")

	m := New(options(b.svc))
	m.pending = messageAction(verbFail, []target{{id: b.ids[4], queue: "XBQIRETURNS", status: domain.StatusNDLV}}, nil)
	m.pending.dialog.Input.SetValue(strings.Repeat("é", 600))
	require.Nil(t, m.confirm(), "nothing runs")
	require.NotNil(t, m.pending, "the dialog stays open")
	require.True(t, m.status.Error)
	require.Contains(t, m.status.Text, "reason: reason is 1200 bytes long; the limit is 1024")
}

// TestKeysInOneRead: keys typed faster than the terminal is read come in one
// message ("jj"); each of them counts. Text for an input stays whole.
func TestKeysInOneRead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := New(options(b.svc))
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	m.view = viewMessages
	p := m.pages[viewMessages]
	p.queue = b.blocked
	m.Update(m.load()())
	require.Greater(t, len(p.visible()), 3)
	require.Equal(t, 0, p.cursor)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	require.Equal(t, 2, p.cursor)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k k")})
	require.Equal(t, 1, p.cursor, "k, space (mark, then down), k")
	require.Len(t, p.marks, 1)

	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/")})
	require.True(t, m.filtering)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("XBQ")})
	require.Equal(t, "XBQ", m.filterInput.Value(), "typed into the filter line whole")
	require.Equal(t, 1, p.cursor)
}

// TestKeyLines: the Blacklist view's key line names what r does there, and
// the help says what space does to the cursor.
func TestKeyLines(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := New(options(b.svc))
	m.view = viewBlacklist
	require.Contains(t, m.hints(), "r release")
	require.NotContains(t, m.hints(), "resend")
	m.view = viewBlocked
	require.Contains(t, m.hints(), "r resend")
	require.Contains(t, m.helpView(120, 40), "space          mark or unmark the row, then move down")
}

// TestNodesNoteWraps: the Nodes view's note when no node serves the store is
// read whole on a narrow terminal.
func TestNodesNoteWraps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := New(options(b.svc))
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 24})
	m.view = viewNodes
	m.Update(m.load()())
	text := strings.Join(strings.Fields(m.View()), " ")
	require.Contains(t, text, "no node is serving the store (queuectl serve runs one); this TUI talks to embedded (this process)")
}

// TestResendBlacklistedHead: r on a queue whose head is blacklisted says
// so, as the Blacklist view's release does, and confirming releases it.
func TestResendBlacklistedHead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24, "XBQIRETURNS")
	press(tm, "j", "r")
	waitFor(t, tm, "in XBQIRETURNS: NDLV → TBDL?", "It is blacklisted", "crashes are reset to 0")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))

	tm = start(t, options(b.svc), 120, 24, "XBQIRETURNS")
	press(tm, "j", "r")
	waitFor(t, tm, "It is blacklisted")
	press(tm, "y")
	waitFor(t, tm, "resent 1 message")
	finish(t, tm)
	poison, err := b.svc.Message(context.Background(), b.ids[4])
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, poison.Status)
	require.Zero(t, poison.Crashes)
	require.False(t, poison.Blacklisted)
}
