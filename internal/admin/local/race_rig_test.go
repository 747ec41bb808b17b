package local_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// raceDeadline bounds every wait of the race test. A wait ends as soon as
// its condition holds; only a stuck engine reaches it.
const raceDeadline = 60 * time.Second

// raceBundle runs the real engine and the local admin service on one store,
// as `queuectl serve` does, with a real HTTP receiver that fails at random.
type raceBundle struct {
	ctx context.Context
	st  *bolt.Store
	svc *local.Service
	cfg *config.Config
	// healthy makes the receiver accept everything (the final drain).
	healthy atomic.Bool
	// eng is the engine running now, told about operator changes.
	eng atomic.Pointer[engine.Engine]
	// changed is poked after every event: waits re-check their condition.
	changed chan struct{}

	mu sync.Mutex
	// seen has, per message id, the status of each engine event about it,
	// in the order the engine reported them.
	seen   map[string][]domain.Status
	events map[engine.EventKind]int
	// troubles are engine log lines that must not happen: a lost
	// compare-and-set, a store failure.
	troubles []string
}

func setupRace(t *testing.T) *raceBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	b := &raceBundle{
		ctx: context.Background(), st: st, changed: make(chan struct{}, 1),
		seen: map[string][]domain.Status{}, events: map[engine.EventKind]int{},
	}
	b.svc = local.New(st, local.Options{Actor: "ops"})
	t.Cleanup(func() { require.NoError(t, b.svc.Close()) })

	srv := httptest.NewServer(http.HandlerFunc(b.answer))
	t.Cleanup(srv.Close)
	rcv := config.Receiver{Type: "http", URLs: []string{srv.URL}, Timeout: raceDeadline}
	b.cfg = &config.Config{
		Engine: config.Engine{
			Role:            "central",
			Workers:         8,
			Retry:           config.Retry{Count: 2, Interval: 20 * time.Millisecond, Backoff: "fixed"},
			Blacklisting:    config.Blacklisting{Enabled: true, Crashes: 2},
			ShutdownTimeout: raceDeadline,
			Retention:       config.Retention{Delivered: 24 * time.Hour, Failed: 24 * time.Hour},
		},
		Receivers: map[string]config.Receiver{"WMS": rcv, "ARCHIVE": rcv},
	}
	return b
}

// answer is the receiver: 503 (transient) one time in five, 400
// (permanent) one in twenty, else 200 — until the bundle is healthy.
func (b *raceBundle) answer(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	code := http.StatusOK
	if !b.healthy.Load() {
		switch n := rand.IntN(20); {
		case n < 4:
			code = http.StatusServiceUnavailable
		case n < 5:
			code = http.StatusBadRequest
		}
	}
	w.WriteHeader(code)
}

func (b *raceBundle) poke() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

func (b *raceBundle) record(e engine.Event) {
	b.mu.Lock()
	b.events[e.Kind]++
	if e.Message != nil {
		b.seen[e.Message.ID] = append(b.seen[e.Message.ID], e.Message.Status)
	}
	b.mu.Unlock()
	b.poke()
}

// start runs an engine on the bundle's store and returns a function that
// stops it cleanly and waits for it.
func (b *raceBundle) start(t *testing.T, node string) (stop func()) {
	t.Helper()
	eng, err := engine.Configured(b.st, b.cfg, engine.Options{Config: engine.Config{NodeID: node}, Observe: b.record,
		Logger: slog.New(&troubleLog{b: b})})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	b.eng.Store(eng)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(raceDeadline):
				t.Fatalf("engine %s did not stop within %s", node, raceDeadline)
			}
			b.eng.CompareAndSwap(eng, nil)
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitFor waits until cond holds, re-checking it after every engine event.
func (b *raceBundle) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(raceDeadline)
	defer timeout.Stop()
	for !cond() {
		select {
		case <-b.changed:
		case <-timeout.C:
			t.Fatalf("waited %s for %s; events %v", raceDeadline, what, b.eventCounts())
		}
	}
}

func (b *raceBundle) eventCounts() map[engine.EventKind]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[engine.EventKind]int{}
	for k, v := range b.events {
		out[k] = v
	}
	return out
}

// inStatus returns the messages in the given statuses, read from the status index.
func (b *raceBundle) inStatus(t *testing.T, statuses ...domain.Status) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{Statuses: statuses}, func(m *domain.Message) error {
			out = append(out, m)
			return nil
		})
	}))
	return out
}

// open is every status that is neither PEND nor final.
var open = []domain.Status{domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT, domain.StatusHOLD, domain.StatusNDLV}

// troubleLog keeps the engine's error lines and its lost compare-and-sets.
type troubleLog struct{ b *raceBundle }

func (l *troubleLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *troubleLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelError && r.Message != "message changed during delivery" {
		return nil
	}
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.b.mu.Lock()
	l.b.troubles = append(l.b.troubles, line)
	l.b.mu.Unlock()
	return nil
}

func (l *troubleLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *troubleLog) WithGroup(string) slog.Handler      { return l }
