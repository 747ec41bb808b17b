package engine_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// deadline bounds every wait of a test. It is generous: a wait ends as soon
// as its condition holds, so only a broken engine ever reaches it.
const deadline = 30 * time.Second

type testBundle struct {
	ctx   context.Context
	st    engine.Store
	cfg   *config.Config
	admin *local.Service
	// changed is poked after every event, log line and endpoint request:
	// waits re-check their condition then.
	changed chan struct{}

	mu     sync.Mutex
	events []engine.Event
	logs   []string

	// Set before start: now replaces the engine's clock, rand its slot
	// draws, hook sees each event synchronously as the engine emits it.
	now  func() time.Time
	rand func(n int) int
	hook func(engine.Event)
	// wrap, if set, puts a store of the test's between the engine and
	// the bundle's store; monotonic replaces the engine's lease clock.
	wrap      func(engine.Store) engine.Store
	monotonic func() time.Time
	// receivers, if set, are receivers of the test's, beside the
	// configured ones.
	receivers map[string]receiver.Receiver
	// beforeCall, if set, runs on a worker right before its last lease
	// check ahead of the receiver call (engine.SetBeforeCall).
	beforeCall func()

	eng  *engine.Engine
	stop context.CancelFunc
	done chan error
}

// setup opens a fresh store and a configuration with tiny retry intervals;
// tests add receivers and routes, then call start.
func setup(t *testing.T) *testBundle {
	t.Helper()
	return setupOn(t, func(t *testing.T, clock func() time.Time) engine.Store {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true, Clock: clock})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, st.Close()) })
		return st
	})
}

// setupOn is setup on the store open returns; clock is the engine's, for
// a store that can take it.
func setupOn(t *testing.T, open func(t *testing.T, clock func() time.Time) engine.Store) *testBundle {
	t.Helper()
	b := &testBundle{}
	// The store's clock is the engine's: a test that sets now moves both.
	clock := func() time.Time {
		if b.now != nil {
			return b.now()
		}
		return time.Now()
	}
	st := open(t, clock)
	*b = testBundle{
		ctx: context.Background(),
		st:  st,
		cfg: &config.Config{
			Engine: config.Engine{
				Role:            "central",
				Workers:         4,
				EOWindow:        32,
				Retry:           config.Retry{Count: 3, Interval: 10 * time.Millisecond, Backoff: "fixed"},
				Blacklisting:    config.Blacklisting{Enabled: true, Crashes: 2},
				ShutdownTimeout: 5 * time.Second,
				Retention:       config.Retention{Delivered: 24 * time.Hour, Failed: 720 * time.Hour},
			},
			Receivers: map[string]config.Receiver{},
		},
		admin:   local.New(st, local.Options{Actor: "test"}),
		changed: make(chan struct{}, 1),
	}
	return b
}

func (b *testBundle) poke() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

func (b *testBundle) record(e engine.Event) {
	if b.hook != nil {
		b.hook(e)
	}
	b.mu.Lock()
	b.events = append(b.events, e)
	b.mu.Unlock()
	b.poke()
}

// start runs a new engine on the bundle's store until the test ends or stop
// is called.
func (b *testBundle) start(t *testing.T) {
	t.Helper()
	cfg, err := engine.ConfigOf(b.cfg)
	require.NoError(t, err)
	cfg.NodeID = "test-node"
	receivers, err := receiver.Build(b.cfg.Receivers)
	require.NoError(t, err)
	maps.Copy(receivers, b.receivers)
	var st engine.Store = b.st
	if b.wrap != nil {
		st = b.wrap(st)
	}
	eng, err := engine.New(engine.Options{
		Store: st, Config: cfg, Receivers: receivers, Rand: b.rand, Clock: clockOf(b.now),
		Monotonic: b.monotonic, Observe: b.record, Logger: slog.New(&logRecorder{b: b}),
	})
	require.NoError(t, err)
	if b.beforeCall != nil {
		engine.SetBeforeCall(eng, b.beforeCall)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	b.eng, b.stop, b.done = eng, cancel, done
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Errorf("the engine did not stop within %s", deadline)
		}
	})
}

// shutdown cancels Run's context and waits for Run to return.
func (b *testBundle) shutdown(t *testing.T) error {
	t.Helper()
	b.stop()
	select {
	case err := <-b.done:
		b.done <- err // for the cleanup
		return err
	case <-time.After(deadline):
		t.Fatalf("the engine did not stop within %s", deadline)
		return nil
	}
}

// waitFor waits until cond holds, re-checking it after every event.
func (b *testBundle) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(deadline)
	defer timeout.Stop()
	for !cond() {
		select {
		case <-b.changed:
		case <-timeout.C:
			t.Fatalf("waited %s for %s; events: %s", deadline, what, b.eventSummary())
		}
	}
}

// count returns how many events of kind the engine has reported.
func (b *testBundle) count(kind engine.EventKind) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// eventsOf returns the events of kind, oldest first.
func (b *testBundle) eventsOf(kind engine.EventKind) []engine.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []engine.Event
	for _, e := range b.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// quiet reports whether the engine's last event is EventIdle: nothing in
// flight and no queue ready. (A queue may still wait for a retry.)
func (b *testBundle) quiet() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events) > 0 && b.events[len(b.events)-1].Kind == engine.EventIdle
}

// waitDelivered waits for n EventDelivered in all.
func (b *testBundle) waitDelivered(t *testing.T, n int) {
	t.Helper()
	b.waitFor(t, fmt.Sprintf("%d deliveries", n), func() bool { return b.count(engine.EventDelivered) >= n })
}

// waitSettled waits until cond holds and the engine is idle.
func (b *testBundle) waitSettled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	b.waitFor(t, what+" and the engine idle", func() bool { return b.quiet() && cond() })
}

func (b *testBundle) eventSummary() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := map[engine.EventKind]int{}
	for _, e := range b.events {
		counts[e.Kind]++
	}
	return fmt.Sprint(counts)
}

// logSummary lists the engine's log messages so far, for a failure's
// message.
func (b *testBundle) logSummary() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.logs, "; ")
}

func (b *testBundle) logged(msg string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Contains(b.logs, msg)
}

// logRecorder keeps the engine's log messages, so tests can wait on them.
type logRecorder struct {
	b     *testBundle
	attrs []slog.Attr
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.b.mu.Lock()
	l.b.logs = append(l.b.logs, r.Message)
	l.b.mu.Unlock()
	l.b.poke()
	return nil
}

func (l *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{b: l.b, attrs: append(slices.Clone(l.attrs), attrs...)}
}

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// send stores inbound messages through the admin service, as `queuectl
// send` does, and wakes a running engine.
func (b *testBundle) send(t *testing.T, reqs ...domain.SendRequest) []*domain.Message {
	t.Helper()
	sent, err := b.admin.Send(b.ctx, reqs)
	require.NoError(t, err)
	if b.eng != nil {
		b.eng.Notify()
	}
	return admin.SentMessages(sent)
}

func eo(receiver, payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{receiver}, Interface: "OrderCreate",
		Payload: []byte(payload)}
}

func eoio(receiver, appQueue, payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{receiver}, AppQueue: appQueue,
		Payload: []byte(payload)}
}

// message reads one message with its history.
func (b *testBundle) message(t *testing.T, id string) *domain.Message {
	t.Helper()
	var m *domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		if m, err = r.Message(id); err != nil {
			return err
		}
		m.History, err = r.History(id)
		return err
	}))
	return m
}

// outbound returns the outbound messages created from an inbound one, in
// creation order.
func (b *testBundle) outbound(t *testing.T, sentID string) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			// The message itself once routing moved it on (§3: one
			// message, one id), or the messages a split made of it.
			if m.SentID() == sentID && m.Stage == domain.Outbound {
				out = append(out, m)
			}
			return nil
		})
	}))
	return out
}

// outboundOf returns the one outbound message of an inbound one, or nil
// while it has none.
func (b *testBundle) outboundOf(t *testing.T, parentID string) *domain.Message {
	t.Helper()
	out := b.outbound(t, parentID)
	require.LessOrEqual(t, len(out), 1)
	if len(out) == 0 {
		return nil
	}
	return out[0]
}

// statusOf returns the status of the one outbound message of each inbound
// message ("" while it has none).
func (b *testBundle) statusOf(t *testing.T, inbound ...*domain.Message) []domain.Status {
	t.Helper()
	out := make([]domain.Status, len(inbound))
	for i, in := range inbound {
		if m := b.outboundOf(t, in.ID); m != nil {
			out[i] = m.Status
		}
	}
	return out
}

// queueState is the state `queue list` shows.
func (b *testBundle) queueState(t *testing.T, name string) domain.QueueState {
	t.Helper()
	q, err := b.admin.Queue(b.ctx, name)
	require.NoError(t, err)
	return q.State
}

func (b *testBundle) queueRecord(t *testing.T, name string) *store.QueueRecord {
	t.Helper()
	var rec *store.QueueRecord
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		rec, err = r.Queue(name)
		return err
	}))
	return rec
}

func (b *testBundle) update(t *testing.T, fn func(w store.Writer) error) {
	t.Helper()
	require.NoError(t, b.st.Update(b.ctx, fn))
}

// code4 is §3's code of a receiver name, spelled out independently of the
// code under test.
func code4(receiver string) string {
	return fmt.Sprintf("%04X", crc32.ChecksumIEEE([]byte(receiver))>>16)
}

// repeat returns n copies of s.
func repeat[T any](s T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// transitions returns a history as "FROM>TO" steps.
func transitions(h []domain.HistoryEntry) []string {
	out := make([]string, len(h))
	for i, e := range h {
		out[i] = string(e.From) + ">" + string(e.To)
	}
	return out
}

// counter is a slot draw that goes round: 0, 1, ..., n-1, 0, ...
func counter() func(n int) int {
	var i atomic.Int64
	return func(n int) int { return int(i.Add(1)-1) % n }
}

// clock is a settable clock for the engine.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock starts at the real time, so that what the engine stamps and
// what the admin service stamps (with the real clock) stay in order.
func newClock() *clock { return &clock{t: time.Now().UTC()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// clockOf is now, or the real clock.
func clockOf(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}
