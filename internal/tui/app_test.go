package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// now is the fixed clock of every test: goldens must not depend on the time.
var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// testBundle is a store with every state the views show, and the service on it.
type testBundle struct {
	svc *local.Service
	st  store.Store
	// ids are the messages made, in order; scrub replaces them in goldens.
	ids     []string
	head    string // the NDLV head of the blocked EOIO queue
	long    string // setupFull's head of XBQIWAREHOUSE_ORDERS
	behind  []string
	blocked string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{Actor: "op", Receivers: []string{"WMS"}, Now: func() time.Time { return now.Add(-time.Minute) },
		Rand: func(int) int { return 0 }})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	b := &testBundle{svc: svc, st: st}
	ctx := context.Background()
	var reqs []domain.SendRequest
	for i := range 4 {
		reqs = append(reqs, domain.SendRequest{QoS: domain.EOIO, Sender: "ERP", Receivers: []string{"BILLING"},
			AppQueue: "INVOICES_FR", Interface: "InvoiceCreate", Payload: []byte(fmt.Sprintf(`{"invoice":%d}`, i+1))})
	}
	// A blacklisted EO message would leave its queue (§4); an EOIO one
	// blocks it, with one message behind.
	for range 2 {
		reqs = append(reqs, domain.SendRequest{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"},
			AppQueue: "RETURNS", Payload: []byte("order")})
	}
	msgs, err := svc.Send(ctx, reqs)
	require.NoError(t, err)
	for _, m := range msgs {
		b.ids = append(b.ids, m.ID)
	}
	b.head, b.behind, b.blocked = msgs[0].ID, b.ids[1:4], msgs[0].Queue
	move := func(id string, from, to domain.Status, update func(m *domain.Message)) {
		t.Helper()
		b.move(t, id, from, to, "test", update)
	}
	move(b.head, domain.StatusTBDL, domain.StatusDLNG, nil)
	move(b.head, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, "422 Unprocessable Entity: unknown currency XXX", domain.ErrorPermanent
	})
	for _, id := range b.behind {
		move(id, domain.StatusTBDL, domain.StatusHOLD, nil) // as the engine holds them behind the NDLV head
	}
	poison := msgs[4].ID
	move(poison, domain.StatusTBDL, domain.StatusDLNG, nil)
	move(poison, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts, m.Crashes, m.Blacklisted, m.Node = 2, 2, true, "node-a"
		m.Error, m.ErrorClass = "blacklisted: the engine process died 2 times while delivering it", domain.ErrorCrash
	})
	move(msgs[5].ID, domain.StatusTBDL, domain.StatusHOLD, nil)
	_, err = svc.Tune(ctx, admin.TuneParams{Param: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: "3"})
	require.NoError(t, err)
	return b
}

// move changes a message's status in the store, as the engine would, 30s
// before the tests' now.
func (b *testBundle) move(t *testing.T, id string, from, to domain.Status, reason string, update func(m *domain.Message)) {
	t.Helper()
	require.NoError(t, b.st.Update(context.Background(), func(w store.Writer) error {
		_, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, Update: update,
			History: domain.HistoryEntry{At: now.Add(-30 * time.Second), Actor: "engine", Node: "node-a", Reason: reason}})
		return err
	}))
}

// setupFull is setup with what the goldens show besides: a blocked queue
// whose name is 20 characters long, with a head that used up its retries
// and a long reason in its history, and audit entries of a refused request
// from a server's client and from an IPv6 address.
func setupFull(t *testing.T) *testBundle {
	t.Helper()
	b := setup(t)
	ctx := context.Background()
	msgs, err := b.svc.Send(ctx, []domain.SendRequest{
		{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"}, AppQueue: "WAREHOUSE_ORDERS", Payload: []byte("<order/>")},
		{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"}, AppQueue: "WAREHOUSE_ORDERS", Payload: []byte("<order/>")},
	})
	require.NoError(t, err)
	for _, m := range msgs {
		b.ids = append(b.ids, m.ID)
	}
	b.long = msgs[0].ID
	b.move(t, b.long, domain.StatusTBDL, domain.StatusDLNG, "delivery 4 of 4", nil)
	b.move(t, b.long, domain.StatusDLNG, domain.StatusNDLV,
		"transient error and no attempts left: 503 Service Unavailable: the warehouse gateway timed out after 30s",
		func(m *domain.Message) {
			m.Attempts, m.ErrorClass = 4, domain.ErrorTransient
			m.Error = "503 Service Unavailable: the warehouse gateway timed out after 30s"
		})
	b.move(t, msgs[1].ID, domain.StatusTBDL, domain.StatusHOLD, "held behind its queue's head", nil)

	// A monitor's refused fail, through a real server.
	c := remoteOptions(t, b, "monitor").Service
	_, err = c.Act(ctx, admin.ActParams{Action: admin.ActFail, Targets: []string{b.head}, Reason: "not mine"})
	require.ErrorIs(t, err, domain.ErrPermission)
	require.NoError(t, b.svc.RecordAudit(ctx, &domain.AuditEntry{At: now.Add(-10 * time.Second), Actor: "ops-operator",
		Source: "2001:db8:85a3:1234:5678:8a2e:370:7334", Action: "queue.stop", Targets: []string{"XBQIRETURNS"},
		Result: domain.AuditOK}))
	return b
}

// scrub replaces the random message ids with fixed ones of the same width.
func (b *testBundle) scrub(s string) string {
	for i, id := range b.ids {
		fixed := fmt.Sprintf("00000000-0000-7000-8000-%012d", i+1)
		s = strings.ReplaceAll(s, id, fixed)
		s = strings.ReplaceAll(s, short(id), short(fixed))
		// An id clipped by its column: its start, then an ellipsis.
		for n := len(id) - 1; n >= 13; n-- {
			s = strings.ReplaceAll(s, id[:n]+"…", fixed[:n]+"…")
		}
	}
	return s
}

// remoteOptions are the options of a TUI that talks, with a token of the
// role given, to a real server over the bundle's service, and knows who it
// is as Run finds out.
func remoteOptions(t *testing.T, b *testBundle, role string) Options {
	t.Helper()
	token := "tok-" + role
	api := httpapi.New(httpapi.Options{Service: b.svc, Auditor: b.svc, Now: func() time.Time { return now.Add(-20 * time.Second) },
		Tokens: []config.Token{{Name: "ops-" + role, Role: role, SHA256: httpapi.HashToken(token)}}})
	srv := httptest.NewServer(api.Handler(false))
	t.Cleanup(srv.Close)
	c, err := remote.New(remote.Options{Server: srv.URL, Token: token})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	opts := options(c)
	opts.Identity, err = Identify(context.Background(), c, time.Minute)
	require.NoError(t, err)
	return opts
}

// auditLog is every entry of the bundle's audit log, oldest first.
func auditLog(t *testing.T, b *testBundle) []*domain.AuditEntry {
	t.Helper()
	var out []*domain.AuditEntry
	require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
		out = append(out, e)
		return nil
	}))
	return out
}

func options(svc admin.Service) Options {
	return Options{Service: svc, NoColor: true, Out: io.Discard, Now: func() time.Time { return now },
		Node: "embedded (this process)"}
}

// start runs the model in a fixed-size terminal and waits for its first
// page and for the texts given.
func start(t *testing.T, opts Options, w, h int, texts ...string) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, &settled{Model: New(opts)}, teatest.WithInitialTermSize(w, h))
	waitFor(t, tm, append([]string{"QUEUE"}, texts...)...)
	return tm
}

// waitFor waits until the output written from now on holds every text.
func waitFor(t *testing.T, tm *teatest.TestModel, texts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, text := range texts {
			if !bytes.Contains(b, []byte(text)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

func press(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		switch k {
		case "enter":
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
		case "space":
			tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")})
		case "ctrl+a":
			tm.Send(tea.KeyMsg{Type: tea.KeyCtrlA})
		case "ctrl+r":
			tm.Send(tea.KeyMsg{Type: tea.KeyCtrlR})
		case "backspace":
			tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
		default:
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
	}
}

// finish quits and returns the final model.
func finish(t *testing.T, tm *teatest.TestModel) *Model {
	t.Helper()
	tm.Send(quitWhenSettled{})
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*settled).Model
}

// settled runs a Model for a test and quits it, on quitWhenSettled, once
// no page is loading: a load started by the last key (a filter, a page,
// a resize) has been drawn before the final view is compared, however
// slowly the machine runs it.
type settled struct {
	*Model
	quitting bool
}

// quitWhenSettled asks settled to quit as Ctrl-C would, once no load is
// under way.
type quitWhenSettled struct{}

func (s *settled) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(quitWhenSettled); ok {
		s.quitting = true
	} else {
		_, cmd := s.Model.Update(msg)
		if !s.quitting || s.Model.loading {
			return s, cmd
		}
	}
	if s.Model.loading {
		return s, nil
	}
	_, cmd := s.Model.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	return s, cmd
}

// step is a key to press and, when set, the text to wait for after it.
type step struct{ key, wait string }

func steps(pairs ...string) []step {
	var out []step
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, step{pairs[i], pairs[i+1]})
	}
	return out
}

// TestViews draws every view, the help and a filtered and a sorted list,
// on the terminals of sizes.
func TestViews(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"Queues", nil},
		{"Blocked", steps("2", "BEHIND")},
		{"Blacklist", steps("3", "CRASHES")},
		{"Tuning", steps("4", "PARAM")},
		{"Nodes", steps("5", "node-b")},
		{"Audit", steps("6", "ACTION")},
		{"AuditEntry", steps("6", "ACTION", "enter", "Audit entry")},
		{"Messages", steps("2", "BEHIND", "enter", "SEQ")},
		{"Detail", steps("2", "BEHIND", "enter", "SEQ", "enter", "History:")},
		{"DetailWrapped", steps("2", "BEHIND", "j", "", "j", "", "enter", "SEQ", "enter", "History:")},
		{"Help", steps("?", "Keys")},
		{"Filter", steps("/", "", "I", "", "N", "", "V", "", "enter", "filter: INV")},
		{"Sort", steps("o", "", "o", "", "o", "", "o", "", "O", "STATE▼")},
	} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s%dx%d", c.name, sz.w, sz.h), func(t *testing.T) {
				t.Parallel()
				b := setupFull(t)
				opts := options(clusterService{Service: b.svc, nodes: testNodes})
				opts.Target = "store /var/lib/queuectl/queuectl.db"
				tm := start(t, opts, sz.w, sz.h)
				for _, s := range c.steps {
					press(tm, s.key)
					if s.wait != "" {
						waitFor(t, tm, s.wait)
					}
				}
				m := finish(t, tm)
				teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))
			})
		}
	}
}
