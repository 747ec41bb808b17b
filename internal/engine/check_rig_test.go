package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// The check-back tests run the checker against a real producer endpoint
// (an HTTP server of the test) on each store: the embedded one with a
// clock the test moves, and PostgreSQL, whose clock moves by itself, with
// intervals short enough to wait for.

// checkDeadline bounds every wait; only a broken checker reaches it.
const checkDeadline = 30 * time.Second

// checkRig is a store, a node of it, and how time passes on it.
type checkRig struct {
	st interface {
		store.Store
		checkStore
	}
	// admin sends and acts on the store, as queuectl send and tx do.
	admin *local.Service
	node  store.Node
	// tx is the rig's check-back configuration; tests change their copy.
	tx Tx
	// hold lets the node hold the queues that exist (its leases).
	hold func(t *testing.T)
	// tick moves the store's clock on by d where the test owns it.
	tick func(d time.Duration)
	// join starts another node; move hands it the node's queues. Nil where
	// the store has one node only.
	join func(t *testing.T, id string) store.Node
	move func(t *testing.T, from, to store.Node)
}

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// checkRigs are the rigs a check-back test runs on: the embedded store,
// and PostgreSQL when QUEUECTL_TEST_PG_URL names one.
func checkRigs() []struct {
	name string
	open func(t *testing.T) *checkRig
} {
	return []struct {
		name string
		open func(t *testing.T) *checkRig
	}{{"bolt", boltRig}, {"postgres", pgRig}}
}

func boltRig(t *testing.T) *checkRig {
	clock := &testClock{now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true, Clock: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	j, err := st.Join(t.Context(), store.JoinParams{ID: "node-a"})
	require.NoError(t, err)
	return &checkRig{
		st: st, node: j.Node,
		admin: local.New(st, local.Options{Actor: "producer", Now: clock.Now}),
		tx:    Tx{After: 30 * time.Second, Interval: 10 * time.Second, MaxChecks: 3, Timeout: 5 * time.Second},
		hold:  func(*testing.T) {},
		tick:  clock.Add,
	}
}

// pgStore is the PostgreSQL store as the checker sees it; the database's
// clock comes from the pool.
type pgStore struct {
	*postgres.Store
	pool *pgxpool.Pool
}

func (s pgStore) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := s.pool.QueryRow(ctx, `SELECT now()`).Scan(&now)
	return now.UTC(), err
}

func pgRig(t *testing.T) *checkRig {
	url := pgtest.URL(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, url, postgres.Options{Migrate: true})
	require.NoError(t, err)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() {
		pool.Close()
		require.NoError(t, st.Check(context.Background()))
		require.NoError(t, st.Close())
	})
	// Nodes and leases are rows: a node holds the queues of its rows (a
	// queue's lease row comes with it, free until a node takes it).
	join := func(t *testing.T, id string) store.Node {
		n := store.Node{ID: id}
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO nodes (id, address) VALUES ($1, '') RETURNING incarnation`, id).
			Scan(&n.Incarnation))
		return n
	}
	r := &checkRig{
		st:    pgStore{Store: st, pool: pool},
		admin: local.New(st, local.Options{Actor: "producer"}),
		tx:    Tx{After: time.Millisecond, Interval: time.Second, MaxChecks: 3, Timeout: 5 * time.Second},
		tick:  func(time.Duration) {},
		join:  join,
		move: func(t *testing.T, from, to store.Node) {
			_, err := pool.Exec(ctx, `UPDATE leases SET node = $2, incarnation = $3, epoch = epoch + 1 WHERE incarnation = $1`,
				int64(from.Incarnation), to.ID, int64(to.Incarnation))
			require.NoError(t, err)
		},
	}
	r.node = join(t, "node-a")
	r.hold = func(t *testing.T) {
		_, err := pool.Exec(ctx, `INSERT INTO leases (queue, node, incarnation, epoch, expires_at)
			SELECT name, $1, $2, 1, now() + interval '1 hour' FROM queues
			ON CONFLICT (queue) DO UPDATE SET node = EXCLUDED.node, incarnation = EXCLUDED.incarnation,
				epoch = leases.epoch + 1, expires_at = EXCLUDED.expires_at
			WHERE leases.expires_at <= now()`,
			r.node.ID, int64(r.node.Incarnation))
		require.NoError(t, err)
	}
	return r
}

// checkBundle runs checkers on a rig against a producer's endpoint and
// records what they report.
type checkBundle struct {
	*checkRig
	ctx      context.Context
	producer *producer
	changed  chan struct{}

	mu     sync.Mutex
	events []Event
	logs   []string
	pokes  []chan struct{}
}

func setupCheck(t *testing.T, rig func(t *testing.T) *checkRig) *checkBundle {
	t.Helper()
	b := &checkBundle{checkRig: rig(t), ctx: t.Context(), changed: make(chan struct{}, 1)}
	b.producer = newProducer(t, b)
	b.tx.CheckURLs = map[string]string{"ERP": b.producer.srv.URL + "/tx-check"}
	return b
}

func (b *checkBundle) poke() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

// start runs a checker for node until the test ends.
func (b *checkBundle) start(t *testing.T, node store.Node) {
	t.Helper()
	c := &checker{
		st: b.st, node: node, placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }},
		cfg: b.tx, client: &http.Client{}, emit: b.record,
		log: slog.New(&checkLog{b: b}), poke: make(chan struct{}, 1),
	}
	b.mu.Lock()
	b.pokes = append(b.pokes, c.poke)
	b.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (b *checkBundle) record(ev Event) {
	b.mu.Lock()
	b.events = append(b.events, ev)
	b.mu.Unlock()
	b.poke()
}

// advance moves the store's clock on by d and wakes the checkers, as a
// running engine's Notify does.
func (b *checkBundle) advance(d time.Duration) {
	b.tick(d)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pokes {
		select {
		case p <- struct{}{}:
		default:
		}
	}
}

// prepare sends prepared (PEND) messages from sender, each with the header
// X-Order, and lets the node hold their queues.
func (b *checkBundle) prepare(t *testing.T, sender string, appQueue string, orders ...string) []*domain.Message {
	t.Helper()
	var reqs []domain.SendRequest
	for _, o := range orders {
		r := domain.SendRequest{QoS: domain.EO, Sender: sender, Receivers: []string{"WMS"}, Interface: "OrderCreate",
			Headers: map[string]string{"X-Order": o}, Payload: []byte(`<order id="` + o + `"/>`), Prepare: true}
		if appQueue != "" {
			r.QoS, r.AppQueue = domain.EOIO, appQueue
		}
		reqs = append(reqs, r)
	}
	sent, err := b.admin.Send(b.ctx, reqs)
	require.NoError(t, err)
	b.hold(t)
	return admin.SentMessages(sent)
}

// waitFor waits until cond holds, re-checking it after every event, log
// line and request.
func (b *checkBundle) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(checkDeadline)
	defer timeout.Stop()
	for !cond() {
		select {
		case <-b.changed:
		case <-timeout.C:
			b.mu.Lock()
			defer b.mu.Unlock()
			t.Fatalf("waited %s for %s; events %v; log %v", checkDeadline, what, b.events, b.logs)
		}
	}
}

// eventsOf returns the events of kind about message id, oldest first.
func (b *checkBundle) eventsOf(kind EventKind, id string) []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Event
	for _, e := range b.events {
		if e.Kind == kind && e.Message.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits for the nth event of kind about message id and returns it.
func (b *checkBundle) waitEvent(t *testing.T, kind EventKind, id string, nth int) Event {
	t.Helper()
	b.waitFor(t, fmt.Sprintf("%s #%d of %s", kind, nth, id), func() bool { return len(b.eventsOf(kind, id)) >= nth })
	return b.eventsOf(kind, id)[nth-1]
}

func (b *checkBundle) logged(msg string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.logs {
		if l == msg {
			return true
		}
	}
	return false
}

// message reads a message with its history; nil when it does not exist.
func (b *checkBundle) message(t *testing.T, id string) *domain.Message {
	t.Helper()
	m, err := b.admin.Message(b.ctx, id)
	if err != nil {
		require.ErrorIs(t, err, domain.ErrNotFound)
		return nil
	}
	return m
}

// checkLog keeps the checker's log messages, so tests can wait on them.
type checkLog struct{ b *checkBundle }

func (l *checkLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *checkLog) Handle(_ context.Context, r slog.Record) error {
	l.b.mu.Lock()
	l.b.logs = append(l.b.logs, r.Message)
	l.b.mu.Unlock()
	l.b.poke()
	return nil
}

func (l *checkLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *checkLog) WithGroup(string) slog.Handler      { return l }

// producer is a producer's check-back endpoint: it records every check
// and answers as its answer function says ({"state":"unknown"} without one).
type producer struct {
	b   *checkBundle
	srv *httptest.Server

	mu       sync.Mutex
	requests []checkRequest
	answer   func(w http.ResponseWriter, r *http.Request, req checkRequest, nth int)
}

func newProducer(t *testing.T, b *checkBundle) *producer {
	p := &producer{b: b}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *producer) serve(w http.ResponseWriter, r *http.Request) {
	var req checkRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || r.Method != http.MethodPost ||
		r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "not a check-back", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, req)
	nth := p.count(req.ID)
	answer := p.answer
	p.mu.Unlock()
	p.b.poke()
	if answer == nil {
		io.WriteString(w, `{"state":"unknown"}`)
		return
	}
	answer(w, r, req, nth)
}

// setAnswer sets how the producer answers.
func (p *producer) setAnswer(fn func(w http.ResponseWriter, r *http.Request, req checkRequest, nth int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = fn
}

// count is how often message id was checked; p.mu is held.
func (p *producer) count(id string) int {
	n := 0
	for _, r := range p.requests {
		if r.ID == id {
			n++
		}
	}
	return n
}

// checks returns the checks of message id.
func (p *producer) checks(id string) []checkRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []checkRequest
	for _, r := range p.requests {
		if r.ID == id {
			out = append(out, r)
		}
	}
	return out
}

// state answers {"state": s}.
func state(s string) func(w http.ResponseWriter, r *http.Request, req checkRequest, nth int) {
	return func(w http.ResponseWriter, _ *http.Request, _ checkRequest, _ int) {
		fmt.Fprintf(w, `{"state":%q}`, s)
	}
}
