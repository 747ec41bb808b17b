package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// now is the fixed clock of every test: goldens must not depend on the time.
var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// testBundle is a store with every state the views show, and the service on it.
type testBundle struct {
	svc *local.Service
	// ids are the messages made, in order; scrub replaces them in goldens.
	ids     []string
	head    string // the NDLV head of the blocked EOIO queue
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
	b := &testBundle{svc: svc}
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
	at := now.Add(-30 * time.Second)
	move := func(id string, from, to domain.Status, update func(m *domain.Message)) {
		t.Helper()
		require.NoError(t, st.Update(ctx, func(w store.Writer) error {
			_, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, Update: update,
				History: domain.HistoryEntry{At: at, Actor: "engine", Node: "node-a", Reason: "test"}})
			return err
		}))
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

// scrub replaces the random message ids with fixed ones of the same width.
func (b *testBundle) scrub(s string) string {
	for i, id := range b.ids {
		fixed := fmt.Sprintf("00000000-0000-7000-8000-%012d", i+1)
		s = strings.ReplaceAll(s, id, fixed)
		s = strings.ReplaceAll(s, short(id), short(fixed))
	}
	return s
}

func options(svc admin.Service) Options {
	return Options{Service: svc, NoColor: true, Out: io.Discard, Now: func() time.Time { return now },
		Node: "embedded (this process)"}
}

// start runs the model in a fixed-size terminal and waits for its first
// page and for the texts given.
func start(t *testing.T, opts Options, w, h int, texts ...string) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(w, h))
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
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
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

func TestViews(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"Queues", nil},
		{"Blocked", steps("2", "BEHIND")},
		{"Blacklist", steps("3", "LAST CRASH")},
		{"Tuning", steps("4", "PARAM")},
		{"Nodes", steps("5", "no node is serving")},
		{"Audit", steps("6", "ACTION")},
		{"Messages", steps("2", "BEHIND", "enter", "SEQ")},
		{"Detail", steps("2", "BEHIND", "enter", "SEQ", "enter", "History:")},
		{"Help", steps("?", "Keys")},
		{"Filter", steps("/", "", "I", "", "N", "", "V", "", "enter", "filter: INV")},
		{"Sort", steps("o", "", "o", "", "o", "", "o", "", "O", "STATE▼")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tm := start(t, options(b.svc), 120, 24)
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
