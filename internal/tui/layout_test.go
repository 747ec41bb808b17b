package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// sizes are the terminals the goldens are drawn on: the smallest an
// operator has, and a large one.
var sizes = []struct{ w, h int }{{80, 24}, {200, 50}}

// TestBlockedViewSizes: at 80×24 the Blocked view keeps the columns an
// operator decides by — status, since, attempts, crashes, behind — and the
// error, in full under the table, even beside a 20-character queue name;
// at 200×50 everything.
func TestBlockedViewSizes(t *testing.T) {
	t.Parallel()
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			t.Parallel()
			b := setupFull(t)
			tm := start(t, options(b.svc), sz.w, sz.h)
			press(tm, "2")
			waitFor(t, tm, "BEHIND")
			m := finish(t, tm)
			view := b.scrub(m.View())
			for _, col := range []string{"STATUS", "SINCE", "ATTEMPTS", "CRASHES", "BEHIND", "ERROR"} {
				require.Contains(t, view, col)
			}
			require.Contains(t, view, "422 Unprocessable Entity: unknown currency XXX", "the error, readable")
			keys := view[strings.LastIndex(view, "\n")+1:]
			require.Contains(t, keys, "? help ·")
			require.Contains(t, keys, "r resend · f fail · s stop/start")
			require.NotContains(t, keys, "…", "the keys line is not cut in a word")
			require.Contains(t, view, "XBQIWAREHOUSE_ORDERS")
		})
	}
}

// TestDialogSizes: the dialogs of f (a blocked head), r in the Blacklist
// (release) and s, at both sizes.
func TestDialogSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"Fail", steps("2", "BEHIND", "f", "enter: confirm")},
		{"FailBoth", steps("2", "BEHIND", "ctrl+a", "", "f", "enter: confirm")},
		{"Release", steps("3", "CRASHES", "r", "[y/N]")},
		{"Stop", steps("s", "[y/N]")},
	} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				tm := start(t, options(b.svc), sz.w, sz.h)
				for _, s := range c.steps {
					press(tm, s.key)
					if s.wait != "" {
						waitFor(t, tm, s.wait)
					}
				}
				m := finish(t, tm)
				require.NotNil(t, m.pending)
				teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
			})
		}
	}
}

// dialogOf opens the fail dialog after steps and returns its text.
func dialogOf(t *testing.T, b *testBundle, steps ...step) string {
	t.Helper()
	tm := start(t, options(b.svc), 120, 24)
	for _, s := range steps {
		press(tm, s.key)
		if s.wait != "" {
			waitFor(t, tm, s.wait)
		}
	}
	m := finish(t, tm)
	require.NotNil(t, m.pending)
	return b.scrub(fmt.Sprint(m.pending.dialog.Title, m.pending.dialog.Lines))
}

// TestOneDialogPerAction: failing the blocked head says the same, how many
// messages move on included, from the Queues, Blocked, Messages and detail
// views.
func TestOneDialogPerAction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := dialogOf(t, b, steps("2", "BEHIND", "f", "enter: confirm")...)
	require.Equal(t, "Fail 1 message (00000000…0001) in XBQIINVOICES_FR: NDLV → FAIL?"+
		"[Then XBQIINVOICES_FR goes on: 3 messages behind its head move on, in order.]", want)
	require.Equal(t, want, dialogOf(t, b, steps("f", "enter: confirm")...), "from the Queues view")
	require.Equal(t, want, dialogOf(t, b, steps("2", "BEHIND", "enter", "SEQ", "f", "enter: confirm")...), "from the Messages view")
	require.Equal(t, want, dialogOf(t, b, steps("2", "BEHIND", "enter", "SEQ", "enter", "History:", "f", "enter: confirm")...),
		"from the detail view")

	// A message held behind the head: nothing moves on, the queue stays blocked.
	require.Equal(t, "Fail 1 message (00000000…0002) in XBQIINVOICES_FR: HOLD → FAIL?"+
		"[XBQIINVOICES_FR stays blocked: its head is not among them.]",
		dialogOf(t, b, steps("2", "BEHIND", "enter", "SEQ", "j", "", "f", "enter: confirm")...))
	// The head and one held message: two move on.
	require.Equal(t, "Fail 2 messages (00000000…0001, 00000000…0002) in XBQIINVOICES_FR: 1 HOLD, 1 NDLV → FAIL?"+
		"[Then XBQIINVOICES_FR goes on: 2 messages behind its head move on, in order.]",
		dialogOf(t, b, steps("2", "BEHIND", "enter", "SEQ", "space", "", "space", "2 marked", "f", "enter: confirm")...))
}

// reversingQueues lists the queues in reverse order from the second
// listing on, and a new queue after them: a refresh that reorders the rows,
// and shows that it happened.
type reversingQueues struct {
	admin.Service
	calls atomic.Int32
}

func (r *reversingQueues) Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	var qs []*domain.Queue
	if err := r.Service.Queues(ctx, f, func(q *domain.Queue) error { qs = append(qs, q); return nil }); err != nil {
		return err
	}
	if r.calls.Add(1) > 1 {
		slices.Reverse(qs)
		qs = append(qs, &domain.Queue{Name: "XBTOZZZZ", QoS: domain.EO, Stage: domain.Outbound, State: domain.QueueEmpty})
	}
	for _, q := range qs {
		if err := fn(q); err != nil {
			return err
		}
	}
	return nil
}

// TestCursorFollowsItsRow: through a refresh that reorders the rows, the
// cursor stays on its queue.
func TestCursorFollowsItsRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(&reversingQueues{Service: b.svc}), 120, 24)
	press(tm, "j")
	waitFor(t, tm, "(XBQIRETURNS")
	press(tm, "ctrl+r")
	waitFor(t, tm, "XBTOZZZZ")
	m := finish(t, tm)
	p := m.pages[viewQueues]
	require.Equal(t, "XBQIRETURNS", p.items[0].key, "the refresh put it first")
	require.Equal(t, 0, p.cursor)
	require.Equal(t, "XBQIRETURNS", p.cursorKey)
}

// TestCursorAfterAnAction: failing the head of the blocked queue under the
// cursor unblocks it, and it leaves the Blocked view. The cursor then
// selects nothing — a second f cannot fail the other queue's head — until
// the operator moves it.
func TestCursorAfterAnAction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "f")
	waitFor(t, tm, "enter: confirm")
	press(tm, "enter")
	waitFor(t, tm, "failed 1 message", "the row under the cursor left this view")
	press(tm, "f")
	waitFor(t, tm, "nothing selected")
	press(tm, "j")
	waitFor(t, tm, "(XBQIRETURNS")
	m := finish(t, tm)
	require.Nil(t, m.pending, "no dialog opened for the other queue")
	p := m.pages[viewBlocked]
	require.Equal(t, "XBQIRETURNS", p.cursorKey)
	require.False(t, p.lost)
	head, err := b.svc.Message(context.Background(), b.ids[4])
	require.NoError(t, err)
	require.Equal(t, domain.StatusNDLV, head.Status, "the other queue's head is untouched")
}

// TestHelpAt80: the help is read whole at 80 columns — a key's text
// wraps under itself instead of being cut — and q closes it instead of
// quitting the TUI.
func TestHelpAt80(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(b.svc), 80, 24)
	press(tm, "?")
	waitFor(t, tm, "Keys")
	m := New(options(b.svc))
	help := m.helpView(80, 1000)
	for _, line := range strings.Split(help, "\n") {
		require.LessOrEqual(t, ansi.StringWidth(line), 80, "%q fits", line)
	}
	all := strings.Join(strings.Fields(help), " ")
	for _, k := range m.keys.helpRows(false) {
		require.Contains(t, all, k.Help().Desc, "the help of %s is whole", k.Help().Key)
	}
	require.Contains(t, help, "  /              filter the list (queue names: the store filters; other lists:\n"+
		"                 the rows shown)", "it wraps under its own text")
	m.helpOffset = 1000
	last := strings.Split(m.helpView(80, 19), "\n")
	require.Len(t, last, 19)
	require.Equal(t, "  q ctrl+c       quit", last[18], "scrolling reaches the last key")

	press(tm, "q")
	waitFor(t, tm, "QUEUE")
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	m = finish(t, tm)
	require.False(t, m.help)
	require.Equal(t, viewBlocked, m.view, "the TUI went on after q closed the help")
}

// TestHistoryWrapsUnderItsText: at 80 columns a long history entry goes on
// on the next line indented under its text, not at column 0; so does a
// long value of the metadata.
func TestHistoryWrapsUnderItsText(t *testing.T) {
	t.Parallel()
	b := setupFull(t)
	m := New(options(b.svc))
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 50})
	m.view, m.detail = viewDetail, &detailPage{id: b.long}
	m.Update(m.load()())
	view := m.View()
	require.Contains(t, view, "  DLNG → NDLV  engine @node-a  transient error and no\n"+
		"    attempts left: 503 Service Unavailable: the warehouse gateway timed out\n"+
		"    after 30s\n")
	require.Equal(t, []string{"store:    a very long value that goes on", "          and on"},
		hang("store:    a very long value that goes on and on", 40, continuationIndent("store:    a")))
}

// TestAuditSourceAt200: at 200 columns the Audit view shows a source
// address whole, an IPv6 one too, and the detail of each entry.
func TestAuditSourceAt200(t *testing.T) {
	t.Parallel()
	b := setupFull(t)
	tm := start(t, options(b.svc), 200, 50)
	press(tm, "6")
	waitFor(t, tm, "DETAIL")
	m := finish(t, tm)
	view := m.View()
	require.Contains(t, view, "  2001:db8:85a3:1234:5678:8a2e:370:7334  ")
	require.Contains(t, view, "  127.0.0.1  ")
	require.Contains(t, view, "  token ops-monitor (role monitor) may not run")
}

// TestTabsKeepEveryView: a narrow terminal loses the tabs' padding, then
// the names of the other views, never a view's tab.
func TestTabsKeepEveryView(t *testing.T) {
	t.Parallel()
	m := New(options(nil))
	for w, want := range map[int]string{
		80: " [1 Queues]   2 Blocked    3 Blacklist    4 Tuning    5 Nodes    6 Audit  ",
		60: "[1 Queues] 2 Blocked 3 Blacklist 4 Tuning 5 Nodes 6 Audit",
		40: "[1 Queues] 2 3 4 5 6",
	} {
		m.width = w
		require.Equal(t, want, m.tabs(), "%d columns", w)
	}
}
