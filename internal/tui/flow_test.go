package tui

import (
	"context"
	"sync/atomic"
	"testing"

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
	waitFor(t, tm, "in XBQIINVOICES_FR: NDLV → FAIL?")
	press(tm, "y")
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
	waitFor(t, tm, "[y/N]")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
	require.NotNil(t, m.pending)

	tm = start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "f")
	waitFor(t, tm, "[y/N]")
	press(tm, "n")
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

// TestNarrow is the Queues view on an 80×24 terminal: columns are left out,
// not squeezed.
func TestNarrow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 80, 24)
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
}
