package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// manyQueues is a service with 10,000 queues that records what each
// listing asked for and how many queues it handed out.
type manyQueues struct {
	admin.Service
	mu      sync.Mutex
	filters []admin.QueueFilter
	handed  []int
}

const queueCount = 10_000

func (s *manyQueues) Queues(_ context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	n := 0
	defer func() {
		s.mu.Lock()
		s.filters, s.handed = append(s.filters, f), append(s.handed, n)
		s.mu.Unlock()
	}()
	for i := range queueCount {
		name := fmt.Sprintf("XBQIQ%05d", i)
		if name <= f.After {
			continue
		}
		if f.Limit > 0 && n == f.Limit {
			return nil
		}
		n++
		if err := fn(&domain.Queue{Name: name, QoS: domain.EOIO, Stage: domain.Inbound, State: domain.QueueActive,
			Depth: int64(i % 7), Counts: map[domain.Status]int64{domain.StatusTBDL: int64(i % 7)}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *manyQueues) Payload(context.Context, string) ([]byte, error) {
	return nil, domain.ErrNotFound
}

func (s *manyQueues) calls() ([]admin.QueueFilter, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]admin.QueueFilter(nil), s.filters...), append([]int(nil), s.handed...)
}

// TestTenThousandQueues shows that the Queues view asks the service for one
// page at a time and holds only that window of rows.
func TestTenThousandQueues(t *testing.T) {
	t.Parallel()
	svc := &manyQueues{}
	tm := start(t, options(svc), 120, 30, "XBQIQ00021")
	rows := 30 - 8 // header, tabs, info, table header, note (2), status and keys
	filters, handed := svc.calls()
	require.Len(t, filters, 1)
	require.Equal(t, rows+1, filters[0].Limit, "one page and one row to learn whether more follow")
	require.Empty(t, filters[0].After)
	require.LessOrEqual(t, handed[0], rows+1)

	press(tm, "n")
	waitFor(t, tm, "XBQIQ00043")
	press(tm, "n")
	waitFor(t, tm, "XBQIQ00065") // page 3's last row: its rows have come, not only its number
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(m.View()))

	filters, handed = svc.calls()
	require.Len(t, filters, 3)
	require.Equal(t, "XBQIQ00021", filters[1].After)
	require.Equal(t, "XBQIQ00043", filters[2].After)
	for i, f := range filters {
		require.Equal(t, rows+1, f.Limit)
		require.LessOrEqual(t, handed[i], rows+1)
	}
	p := m.pages[viewQueues]
	require.Len(t, p.items, rows)
	require.Equal(t, "XBQIQ00044", p.items[0].key)
}

// TestResize reflows: a shorter terminal reloads a shorter page.
func TestResize(t *testing.T) {
	t.Parallel()
	svc := &manyQueues{}
	tm := start(t, options(svc), 120, 30, "XBQIQ00021")
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 12})
	waitFor(t, tm, "page 1 · 4 rows")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(m.View()))
	filters, _ := svc.calls()
	require.Len(t, filters, 2)
	require.Equal(t, 5, filters[1].Limit)
}

// failingQueues fails every listing after the first.
type failingQueues struct {
	admin.Service
	mu    sync.Mutex
	calls int
}

func (f *failingQueues) Queues(ctx context.Context, qf admin.QueueFilter, fn func(*domain.Queue) error) error {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if n > 1 {
		return fmt.Errorf("%w: server at http://127.0.0.1:1 does not answer", domain.ErrUnavailable)
	}
	return f.Service.Queues(ctx, qf, fn)
}

// TestRefreshFails keeps the last rows and shows the error.
func TestRefreshFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(&failingQueues{Service: b.svc}), 120, 24)
	press(tm, "ctrl+r")
	waitFor(t, tm, "does not answer")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
	require.Len(t, m.pages[viewQueues].items, 2)
}

// TestMonitorIsReadOnly: a monitor token, against a real server, gets a
// read-only TUI that refuses the action keys — and starting it writes
// nothing to the audit log: the TUI asks who it is, it does not try.
func TestMonitorIsReadOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	opts := remoteOptions(t, b, "monitor")
	tm := start(t, opts, 120, 40, "READ-ONLY")
	press(tm, "f")
	waitFor(t, tm, "read-only: actions are off")
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "enter")
	waitFor(t, tm, "SEQ")
	press(tm, "enter")
	waitFor(t, tm, "(not shown: this token may not read payloads)")
	m := finish(t, tm)
	require.Nil(t, m.pending)
	require.Contains(t, m.View(), "as ops-monitor, role monitor")
	for _, e := range auditLog(t, b) {
		require.NotEqual(t, "ops-monitor", e.Actor, "no request was refused, so none is audited: %+v", e)
	}
}

var errForbidden = fmt.Errorf("%w: token %q (role monitor) may not do this", domain.ErrPermission, "ops-monitor")

// actDenied may read payloads but is refused every action, as when a
// token's role changed while the TUI ran.
type actDenied struct{ admin.Service }

func (actDenied) Act(context.Context, admin.ActParams) (*admin.BulkResult, error) {
	return nil, errForbidden
}

// TestActionDeniedSwitchesToReadOnly: a permission-denied answer to an
// action turns the actions off.
func TestActionDeniedSwitchesToReadOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tm := start(t, options(actDenied{b.svc}), 120, 24)
	press(tm, "f")
	waitFor(t, tm, "enter: confirm")
	press(tm, "enter")
	waitFor(t, tm, "now read-only")
	m := finish(t, tm)
	require.True(t, m.readOnly)
	require.True(t, errors.Is(errForbidden, domain.ErrPermission))
	require.NotContains(t, m.hints(), "f fail")
}

// TestReadOnlyFlag hides the actions from the start (--read-only).
func TestReadOnlyFlag(t *testing.T) {
	t.Parallel()
	b := setup(t)
	opts := options(b.svc)
	opts.ReadOnly = true
	tm := start(t, opts, 120, 24)
	press(tm, "?")
	waitFor(t, tm, "read-only: r f s e u are off")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
}

// payloadCounter counts the payloads asked of a service that refuses them,
// as the API does for a token whose role lost its payloads while the TUI ran.
type payloadCounter struct {
	admin.Service
	asked atomic.Int32
}

func (p *payloadCounter) Payload(context.Context, string) ([]byte, error) {
	p.asked.Add(1)
	return nil, errForbidden
}

// TestDeniedPayloadIsNotAskedAgain: once the service refused a payload
// for want of permission, refreshing the detail view asks for none again —
// on a server, each refusal would be a denied request in the audit log.
// A role that may not read payloads is never asked for one.
func TestDeniedPayloadIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := &payloadCounter{Service: b.svc}
	m := New(options(svc))
	m.view, m.detail = viewDetail, &detailPage{id: b.head}
	for range 5 {
		m.Update(m.load()())
	}
	require.Equal(t, int32(1), svc.asked.Load())
	require.Contains(t, strings.Join(m.detail.lines(now), "\n"), "(not shown: this token may not read payloads)")

	svc = &payloadCounter{Service: b.svc}
	opts := options(svc)
	opts.Identity = admin.NewIdentity("ops-monitor", admin.RoleMonitor)
	m = New(opts)
	m.view, m.detail = viewDetail, &detailPage{id: b.head}
	for range 5 {
		m.Update(m.load()())
	}
	require.Zero(t, svc.asked.Load(), "the role says it first")
	require.Contains(t, strings.Join(m.detail.lines(now), "\n"), "(not shown: this token may not read payloads)")
}
