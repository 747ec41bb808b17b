package metrics_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/metrics"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// deadline bounds every wait; a wait ends as soon as its condition holds.
const deadline = 30 * time.Second

// attemptTime is how long each delivery attempt takes on the engine's
// clock: the receiver advances the clock by it.
const attemptTime = 2 * time.Second

type testBundle struct {
	st   *bolt.Store
	svc  *local.Service
	cfg  *config.Config
	col  *metrics.Collector
	api  *httptest.Server
	now  *clock
	node string

	mu       sync.Mutex
	outcomes int // delivered, waiting and failed events
	checks   int // check-back events
	idle     bool
	changed  chan struct{}

	running bool
	stop    context.CancelFunc
	done    chan error
}

// setup opens a store with a WMS receiver (a real HTTP endpoint whose
// answer depends on the payload) and an ARCHIVE receiver nothing is sent
// to, and serves the API with the collector on /metrics.
func setup(t *testing.T) *testBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	b := &testBundle{st: st, now: &clock{t: time.Now().UTC()}, node: "metrics-node", changed: make(chan struct{}, 1)}
	attempts := map[string]int{}
	var mu sync.Mutex
	wms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.now.Advance(attemptTime)
		mu.Lock()
		attempts[string(body)]++
		nth := attempts[string(body)]
		mu.Unlock()
		switch {
		case string(body) == "bad":
			w.WriteHeader(http.StatusBadRequest)
		case string(body) == "flaky" && nth == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(wms.Close)
	b.cfg = &config.Config{
		Engine: config.Engine{
			Role: "central", Workers: 1, ShutdownTimeout: 5 * time.Second,
			Retry:        config.Retry{Count: 3, Backoff: "fixed"},
			Blacklisting: config.Blacklisting{Enabled: true, Crashes: 2},
			Retention:    config.Retention{Delivered: 24 * time.Hour, Failed: 720 * time.Hour},
		},
		Receivers: map[string]config.Receiver{
			"WMS":     {Type: "http", URLs: []string{wms.URL}, Timeout: deadline},
			"ARCHIVE": {Type: "http", URLs: []string{wms.URL}, Timeout: deadline},
		},
	}
	b.svc = local.New(st, local.Options{Role: domain.RoleCentral, Actor: "test"})
	b.col = metrics.New(metrics.Options{
		Source: b.svc, Node: b.node, Running: b.isRunning, Receivers: []string{"ARCHIVE", "WMS"},
	})
	api := httpapi.New(httpapi.Options{Service: b.svc, Metrics: b.col.Handler()})
	b.api = httptest.NewServer(api.Handler(true)) // the socket's handler: no token needed
	t.Cleanup(b.api.Close)
	return b
}

func (b *testBundle) isRunning() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running
}

// observe is the engine's OnEvent, as serve wires it.
func (b *testBundle) observe(ev engine.Event) {
	b.col.Observe(ev)
	b.mu.Lock()
	switch ev.Kind {
	case engine.EventRecovered:
		b.running = true
	case engine.EventDelivered, engine.EventWaiting, engine.EventFailed:
		b.outcomes++
	case engine.EventCheckCommitted, engine.EventCheckRolledBack, engine.EventCheckUnanswered, engine.EventStuck:
		b.checks++
	}
	b.idle = ev.Kind == engine.EventIdle
	b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

// start runs the engine until the test ends or stopEngine is called.
func (b *testBundle) start(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := engine.Configured(b.st, b.cfg, engine.Options{Config: engine.Config{NodeID: b.node}, Clock: b.now.Now, Observe: b.observe})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	b.stop, b.done = cancel, make(chan error, 1)
	go func() { b.done <- eng.Run(ctx) }()
	t.Cleanup(func() { b.stopEngine(t) })
	return eng
}

func (b *testBundle) stopEngine(t *testing.T) {
	t.Helper()
	if b.stop == nil {
		return
	}
	b.stop()
	b.stop = nil
	select {
	case err := <-b.done:
		require.NoError(t, err)
	case <-time.After(deadline):
		t.Fatalf("the engine did not stop within %s", deadline)
	}
	b.mu.Lock()
	b.running = false
	b.mu.Unlock()
}

// waitOutcomes waits for n delivery outcomes and the engine idle.
func (b *testBundle) waitOutcomes(t *testing.T, n int) {
	t.Helper()
	timeout := time.NewTimer(deadline)
	defer timeout.Stop()
	for {
		b.mu.Lock()
		done := b.outcomes >= n && b.idle
		got := b.outcomes
		b.mu.Unlock()
		if done {
			return
		}
		select {
		case <-b.changed:
		case <-timeout.C:
			t.Fatalf("waited %s for %d delivery outcomes; got %d", deadline, n, got)
		}
	}
}

// deadNodeHad stores an outbound message for WMS as DLNG on a node that
// died, having crashed `crashes` times before.
func (b *testBundle) deadNodeHad(t *testing.T, node, appQueue, payload string, crashes int) {
	t.Helper()
	m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: "WMS",
		Stage: domain.Outbound, Status: domain.StatusTBDL, Queue: "XBTO" + code4("WMS")}
	if appQueue != "" {
		m.QoS, m.AppQueue, m.Queue = domain.EOIO, appQueue, "XBQO"+code4("WMS")+appQueue
	}
	require.NoError(t, b.st.Update(context.Background(), func(w store.Writer) error {
		if err := w.Insert(m, []byte(payload), domain.HistoryEntry{Actor: "test", Reason: "inserted"}); err != nil {
			return err
		}
		_, err := w.Transition(store.TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG,
			Update:  func(m *domain.Message) { m.Node, m.Attempts, m.Crashes = node, 1, crashes },
			History: domain.HistoryEntry{Node: node, Actor: "engine", Reason: "delivery attempt 1"},
		})
		return err
	}))
}

// scrape GETs /metrics as Prometheus would and parses the text format.
func (b *testBundle) scrape(t *testing.T) families {
	t.Helper()
	resp, err := http.Get(b.api.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

type families map[string]*dto.MetricFamily

// series returns the metrics of a family whose labels include want.
func (f families) series(t *testing.T, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	fam, ok := f[name]
	require.True(t, ok, "family %s is missing", name)
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		if hasLabels(m, want) {
			out = append(out, m)
		}
	}
	return out
}

// one returns the one metric of a family with exactly these labels.
func (f families) one(t *testing.T, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	var out []*dto.Metric
	for _, m := range f.series(t, name, labels) {
		if len(m.GetLabel()) == len(labels) {
			out = append(out, m)
		}
	}
	require.Len(t, out, 1, "%s%v", name, labels)
	return out[0]
}

func (f families) gauge(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return f.one(t, name, labels).GetGauge().GetValue()
}

func (f families) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	return f.one(t, name, labels).GetCounter().GetValue()
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// code4 is §3's code of a receiver name, spelled out independently.
func code4(receiver string) string {
	return fmt.Sprintf("%04X", crc32.ChecksumIEEE([]byte(receiver))>>16)
}

// clock is the engine's settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

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

func q(name, qos, stage, status string) map[string]string {
	return map[string]string{"queue": name, "qos": qos, "stage": stage, "status": status}
}

func TestMetricsAfterRealDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Two dead nodes left a message DLNG each: one for the first time (it
	// is requeued and then delivered), one alone for the second (blacklisted).
	b.deadNodeHad(t, "dead-node", "", "crashed-once", 0)
	b.deadNodeHad(t, "dead-node-2", "P", "poison", 1)
	eng := b.start(t)
	_, err := b.svc.Send(context.Background(), []domain.SendRequest{
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("ok-1")},
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("ok-2")},
		{QoS: domain.EOIO, Sender: "ERP", Receivers: []string{"WMS"}, AppQueue: "A", Payload: []byte("bad")},
		{QoS: domain.EOIO, Sender: "ERP", Receivers: []string{"WMS"}, AppQueue: "B", Payload: []byte("flaky")},
	})
	require.NoError(t, err)
	eng.Notify()
	// crashed-once, ok-1, ok-2, flaky twice: delivered 4; bad: permanent.
	b.waitOutcomes(t, 6)
	fams := b.scrape(t)

	for _, name := range []string{
		"queuectl_queue_messages", "queuectl_blacklisted_messages", "queuectl_node_up",
		"queuectl_deliveries_total", "queuectl_delivery_errors_total", "queuectl_delivery_duration_seconds",
		"queuectl_crash_recoveries_total", "go_goroutines", "process_start_time_seconds",
	} {
		require.Contains(t, fams, name)
	}
	require.Equal(t, dto.MetricType_GAUGE, fams["queuectl_queue_messages"].GetType())
	require.Equal(t, dto.MetricType_COUNTER, fams["queuectl_deliveries_total"].GetType())
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["queuectl_delivery_duration_seconds"].GetType())

	// Queue depth per status, as the store counts it: every status of every
	// queue is a series, zeros included.
	eo, a, bq, p := "XBTO"+code4("WMS"), "XBQO"+code4("WMS")+"A", "XBQO"+code4("WMS")+"B", "XBQO"+code4("WMS")+"P"
	require.Equal(t, 3.0, fams.gauge(t, "queuectl_queue_messages", q(eo, "EO", "outbound", "DLVD")))
	require.Equal(t, 0.0, fams.gauge(t, "queuectl_queue_messages", q(eo, "EO", "outbound", "TBDL")))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_queue_messages", q(a, "EOIO", "outbound", "NDLV")))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_queue_messages", q(bq, "EOIO", "outbound", "DLVD")))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_queue_messages", q(p, "EOIO", "outbound", "NDLV")))
	require.Equal(t, 2.0, fams.gauge(t, "queuectl_queue_messages", q("XBTI0000", "EO", "inbound", "DLVD")))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_queue_messages", q("XBQIA", "EOIO", "inbound", "DLVD")))
	queues := 0
	require.NoError(t, b.svc.Queues(context.Background(), admin.QueueFilter{}, func(q *domain.Queue) error {
		queues++
		for _, st := range domain.Statuses {
			got := fams.gauge(t, "queuectl_queue_messages", labelsOf(q, st))
			require.Equal(t, float64(q.Counts[st]), got, "%s %s", q.Name, st)
		}
		return nil
	}))
	require.Len(t, fams["queuectl_queue_messages"].GetMetric(), queues*len(domain.Statuses))

	// The state of every queue, one series per state, the current one at 1.
	state := func(name, qos, stage, st string) float64 {
		return fams.gauge(t, "queuectl_queue_state", map[string]string{"queue": name, "qos": qos, "stage": stage, "state": st})
	}
	require.Equal(t, 1.0, state(a, "EOIO", "outbound", "BLOCKED"), "a permanent error blocks an EOIO queue")
	require.Equal(t, 0.0, state(a, "EOIO", "outbound", "ACTIVE"))
	require.Equal(t, 1.0, state(eo, "EO", "outbound", "EMPTY"))
	require.Len(t, fams["queuectl_queue_state"].GetMetric(), queues*len(domain.QueueStates))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_blacklisted_messages", map[string]string{}))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_node_up", map[string]string{"node": "metrics-node"}))
	// The embedded store's one node, as node list shows it: alive, holding every queue.
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_node_alive", map[string]string{"node": "metrics-node"}))
	require.Equal(t, float64(queues), fams.gauge(t, "queuectl_leases_held", map[string]string{"node": "metrics-node"}))
	require.Len(t, fams.series(t, "queuectl_node_alive", nil), 1)

	// Deliveries, errors and latency per receiver, from the engine's events.
	wms := func(k, v string) map[string]string { return map[string]string{"receiver": "WMS", k: v} }
	require.Equal(t, 4.0, fams.counter(t, "queuectl_deliveries_total", wms("result", "delivered")))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_deliveries_total", wms("result", "transient")))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_deliveries_total", wms("result", "permanent")))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_delivery_errors_total", wms("class", "transient")))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_delivery_errors_total", wms("class", "permanent")))
	require.Equal(t, 2.0, fams.counter(t, "queuectl_delivery_errors_total", wms("class", "crash")))
	// Every configured receiver has every class from the start, at zero
	// until its first error, so that rate() sees the first ones.
	require.Len(t, fams.series(t, "queuectl_delivery_errors_total", nil), 6, "two receivers, three classes")
	for _, class := range []string{"transient", "permanent", "crash"} {
		require.Equal(t, 0.0, fams.counter(t, "queuectl_delivery_errors_total", map[string]string{"receiver": "ARCHIVE", "class": class}))
	}

	h := fams.one(t, "queuectl_delivery_duration_seconds", map[string]string{"receiver": "WMS"}).GetHistogram()
	require.Equal(t, uint64(6), h.GetSampleCount())
	require.InDelta(t, 6*attemptTime.Seconds(), h.GetSampleSum(), 1e-9)
	buckets := map[float64]uint64{}
	for _, bk := range h.GetBucket() {
		buckets[bk.GetUpperBound()] = bk.GetCumulativeCount()
	}
	require.Equal(t, uint64(0), buckets[1], "every attempt took 2s")
	require.Equal(t, uint64(6), buckets[2.5])

	// A configured receiver shows at zero before its first delivery.
	archive := map[string]string{"receiver": "ARCHIVE", "result": "delivered"}
	require.Equal(t, 0.0, fams.counter(t, "queuectl_deliveries_total", archive))
	require.Zero(t, fams.one(t, "queuectl_delivery_duration_seconds", map[string]string{"receiver": "ARCHIVE"}).
		GetHistogram().GetSampleCount())

	require.Equal(t, 1.0, fams.counter(t, "queuectl_crash_recoveries_total", map[string]string{"result": "requeued"}))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_crash_recoveries_total", map[string]string{"result": "blacklisted"}))

	// Stopped, the node is down; what it counted stays.
	b.stopEngine(t)
	fams = b.scrape(t)
	require.Equal(t, 0.0, fams.gauge(t, "queuectl_node_up", map[string]string{"node": "metrics-node"}))
	require.Equal(t, 4.0, fams.counter(t, "queuectl_deliveries_total", wms("result", "delivered")))
	require.NotContains(t, fams, "queuectl_node_alive", "the engine left: no node serves the embedded store")
}

// clusterSource is a store with no queues, served by a cluster of nodes.
type clusterSource struct{ nodes []admin.Node }

func (clusterSource) Queues(context.Context, admin.QueueFilter, func(*domain.Queue) error) error {
	return nil
}

func (clusterSource) Messages(context.Context, admin.MessageFilter, func(*domain.Message) error) error {
	return nil
}

func (s clusterSource) Nodes(context.Context) ([]admin.Node, error) { return s.nodes, nil }

// TestNodeMetrics: every node the store lists has a liveness and a lease
// count; a node that restarted is alive through its new incarnation and
// holds the leases of both (the old one's until they expire).
func TestNodeMetrics(t *testing.T) {
	t.Parallel()
	col := metrics.New(metrics.Options{Source: clusterSource{nodes: []admin.Node{
		{ID: "node-a", Incarnation: 3, Alive: false, Queues: 2},
		{ID: "node-a", Incarnation: 7, Alive: true, Queues: 40},
		{ID: "node-b", Incarnation: 5, Alive: false, Queues: 0, InFlight: 3},
		{ID: "node-c", Incarnation: 6, Alive: true, Queues: 38},
	}}, Node: "node-a"})
	srv := httptest.NewServer(col.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	f := families(fams)
	node := func(id string) map[string]string { return map[string]string{"node": id} }
	require.Equal(t, 1.0, f.gauge(t, "queuectl_node_alive", node("node-a")))
	require.Equal(t, 0.0, f.gauge(t, "queuectl_node_alive", node("node-b")))
	require.Equal(t, 1.0, f.gauge(t, "queuectl_node_alive", node("node-c")))
	require.Equal(t, 42.0, f.gauge(t, "queuectl_leases_held", node("node-a")))
	require.Equal(t, 0.0, f.gauge(t, "queuectl_leases_held", node("node-b")))
	require.Equal(t, 38.0, f.gauge(t, "queuectl_leases_held", node("node-c")))
	require.Len(t, f.series(t, "queuectl_node_alive", nil), 3)
}

// labelsOf are the labels of a queue's series for one status.
func labelsOf(qu *domain.Queue, st domain.Status) map[string]string {
	return q(qu.Name, string(qu.QoS), string(qu.Stage), string(st))
}

// The inbound stage calls no receiver: its outcomes count for no receiver.
func TestInboundOutcomesAreNotDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.col.Observe(engine.Event{Kind: engine.EventFailed, Duration: time.Second, Message: &domain.Message{
		Stage: domain.Inbound, Status: domain.StatusNDLV, ErrorClass: domain.ErrorPermanent}})
	b.col.Observe(engine.Event{Kind: engine.EventRouted, Message: &domain.Message{Stage: domain.Inbound}})
	fams := b.scrape(t)
	for _, m := range fams.series(t, "queuectl_deliveries_total", nil) {
		require.Zero(t, m.GetCounter().GetValue(), "%v", m.GetLabel())
	}
	for _, m := range fams.series(t, "queuectl_delivery_errors_total", nil) {
		require.Zero(t, m.GetCounter().GetValue(), "%v", m.GetLabel())
	}
	require.Equal(t, 0.0, fams.gauge(t, "queuectl_node_up", map[string]string{"node": "metrics-node"}))
}

// A configured receiver's error series exist at zero before any delivery.
func TestErrorSeriesStartAtZero(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fams := b.scrape(t)
	for _, r := range []string{"ARCHIVE", "WMS"} {
		for _, class := range []string{"transient", "permanent", "crash"} {
			require.Equal(t, 0.0, fams.counter(t, "queuectl_delivery_errors_total", map[string]string{"receiver": r, "class": class}))
		}
		for _, result := range []string{"delivered", "transient", "permanent"} {
			require.Equal(t, 0.0, fams.counter(t, "queuectl_deliveries_total", map[string]string{"receiver": r, "result": result}))
		}
	}
}

// Receivers that are not configured — names producers made up — share one
// label value: however many there are, they add one series per class.
func TestUnconfiguredReceiversShareOneLabel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 500 {
		m := &domain.Message{Stage: domain.Outbound, Receiver: fmt.Sprintf("MADE_UP_%d", i), Status: domain.StatusNDLV,
			ErrorClass: domain.ErrorPermanent}
		b.col.Observe(engine.Event{Kind: engine.EventFailed, Duration: time.Second, Message: m})
		b.col.Observe(engine.Event{Kind: engine.EventBlacklisted, Message: m})
	}
	b.col.Observe(engine.Event{Kind: engine.EventDelivered, Duration: time.Second,
		Message: &domain.Message{Stage: domain.Outbound, Receiver: "WMS", Status: domain.StatusDLVD}})
	fams := b.scrape(t)
	other := func(k, v string) map[string]string {
		return map[string]string{"receiver": metrics.UnconfiguredReceiver, k: v}
	}
	require.Equal(t, 500.0, fams.counter(t, "queuectl_delivery_errors_total", other("class", "permanent")))
	require.Equal(t, 500.0, fams.counter(t, "queuectl_delivery_errors_total", other("class", "crash")))
	require.Equal(t, 500.0, fams.counter(t, "queuectl_deliveries_total", other("result", "permanent")))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_deliveries_total", map[string]string{"receiver": "WMS", "result": "delivered"}))
	receivers := map[string]bool{}
	for _, name := range []string{"queuectl_deliveries_total", "queuectl_delivery_errors_total", "queuectl_delivery_duration_seconds"} {
		for _, m := range fams.series(t, name, nil) {
			for _, l := range m.GetLabel() {
				if l.GetName() == "receiver" {
					receivers[l.GetValue()] = true
				}
			}
		}
	}
	require.Equal(t, map[string]bool{"ARCHIVE": true, "WMS": true, metrics.UnconfiguredReceiver: true}, receivers)
}

// TestMetricsPassPromlint lints a scrape as promtool check metrics does,
// after deliveries of every outcome, a crash recovery and check-backs.
func TestMetricsPassPromlint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, ev := range []engine.Event{
		{Kind: engine.EventDelivered, Duration: time.Second, Message: &domain.Message{Stage: domain.Outbound, Receiver: "WMS"}},
		{Kind: engine.EventWaiting, Duration: time.Second, Message: &domain.Message{Stage: domain.Outbound, Receiver: "WMS", ErrorClass: domain.ErrorTransient}},
		{Kind: engine.EventFailed, Duration: time.Second, Message: &domain.Message{Stage: domain.Outbound, Receiver: "NOPE", ErrorClass: domain.ErrorPermanent}},
		{Kind: engine.EventBlacklisted, Message: &domain.Message{Stage: domain.Outbound, Receiver: "WMS"}},
		{Kind: engine.EventCheckCommitted},
	} {
		b.col.Observe(ev)
	}
	_, err := b.svc.Send(context.Background(), []domain.SendRequest{{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("x")}})
	require.NoError(t, err)
	resp, err := http.Get(b.api.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	problems, err := promlint.New(resp.Body).Lint()
	require.NoError(t, err)
	require.Empty(t, problems)
}

// TestOpenMetrics: a scraper that asks for OpenMetrics gets it; one that
// does not, the Prometheus text format.
func TestOpenMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	scrape := func(accept string) (string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, b.api.URL+"/metrics", nil)
		require.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.Header.Get("Content-Type"), string(body)
	}
	ct, body := scrape("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	require.True(t, strings.HasPrefix(ct, expfmt.OpenMetricsType+";"), ct)
	require.True(t, strings.HasSuffix(body, "# EOF\n"), "an OpenMetrics exposition ends with # EOF")
	require.Contains(t, body, "# TYPE queuectl_node_up gauge")

	ct, body = scrape("")
	require.True(t, strings.HasPrefix(ct, "text/plain;"), ct)
	require.NotContains(t, body, "# EOF")
}

// failingSource is a store that cannot be read.
type failingSource struct{}

func (failingSource) Queues(context.Context, admin.QueueFilter, func(*domain.Queue) error) error {
	return domain.Errorf(domain.ErrUnavailable, "the store is down")
}

func (failingSource) Messages(context.Context, admin.MessageFilter, func(*domain.Message) error) error {
	return domain.Errorf(domain.ErrUnavailable, "the store is down")
}

func (failingSource) Nodes(context.Context) ([]admin.Node, error) {
	return nil, domain.Errorf(domain.ErrUnavailable, "the store is down")
}

// A scrape that cannot read the store fails, so the scraper sees it.
func TestScrapeFailsWhenTheStoreCannotBeRead(t *testing.T) {
	t.Parallel()
	col := metrics.New(metrics.Options{Source: failingSource{}, Node: "n"})
	srv := httptest.NewServer(col.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Contains(t, string(body), "the store is down")
}
