// Package metrics serves queuectl's Prometheus metrics (§6, /metrics). What
// the store knows — queue depth per status, the blacklisted total, the
// stuck transactions, the nodes serving it and the leases they hold — is
// read on each scrape, at O(queues) cost from the per-queue counters; what only the engine sees — deliveries, errors and
// their latency per receiver, crash recoveries, check-backs — is counted
// from its events as they happen.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
)

// Source is what a scrape reads: admin.Service has it.
type Source interface {
	Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error
	Messages(ctx context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error
	Nodes(ctx context.Context) ([]admin.Node, error)
}

// Options configure a Collector.
type Options struct {
	// Source is read on each scrape.
	Source Source
	// Node names this process in queuectl_node_up.
	Node string
	// Running reports whether the engine is delivering (queuectl_node_up);
	// nil reports it never is.
	Running func() bool
	// Receivers are the configured receivers: their delivery and error
	// series exist, at zero, before their first delivery, so that rates
	// start at once. A receiver not among them — a name a producer made
	// up — is counted under the one label value UnconfiguredReceiver, so
	// that producers cannot grow the series without bound.
	Receivers []string
	// ScrapeTimeout bounds the store reads of one scrape; default 10s.
	ScrapeTimeout time.Duration
	Logger        *slog.Logger
}

// Results of a delivery attempt (queuectl_deliveries_total's result).
const (
	ResultDelivered = "delivered"
	ResultTransient = string(domain.ErrorTransient)
	ResultPermanent = string(domain.ErrorPermanent)
)

// UnconfiguredReceiver is the receiver label of the deliveries to every
// receiver that is not configured. No receiver can be named so: parentheses
// are not among the characters of a receiver's name.
const UnconfiguredReceiver = "(unconfigured)"

// errorClasses are the classes of queuectl_delivery_errors_total.
var errorClasses = []string{string(domain.ErrorTransient), string(domain.ErrorPermanent), string(domain.ErrorCrash)}

// Outcomes of crash recovery (queuectl_crash_recoveries_total's result).
const (
	RecoveryRequeued    = "requeued"
	RecoveryBlacklisted = "blacklisted"
)

// Results of a check-back with a producer (queuectl_tx_checks_total's
// result, §9).
const (
	CheckCommit     = "commit"
	CheckRollback   = "rollback"
	CheckUnanswered = "unanswered"
)

// durationBuckets span a fast local receiver to one at its 30s default
// timeout and beyond.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Collector is the metrics of one serve process. Observe feeds it the
// engine's events; Handler serves it in the Prometheus text format.
type Collector struct {
	opts Options
	// receivers are the configured receivers, the receiver label's values
	// besides UnconfiguredReceiver.
	receivers map[string]bool

	queueMessages *prometheus.Desc
	queueState    *prometheus.Desc
	blacklisted   *prometheus.Desc
	stuck         *prometheus.Desc
	nodeUp        *prometheus.Desc
	nodeAlive     *prometheus.Desc
	leasesHeld    *prometheus.Desc

	deliveries *prometheus.CounterVec
	errors     *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	recoveries *prometheus.CounterVec
	checks     *prometheus.CounterVec

	registry *prometheus.Registry
}

var _ prometheus.Collector = (*Collector)(nil)

// New builds a Collector and the registry it serves from, which also holds
// the Go runtime and process metrics.
func New(opts Options) *Collector {
	if opts.ScrapeTimeout <= 0 {
		opts.ScrapeTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Collector{
		opts: opts,
		queueMessages: prometheus.NewDesc("queuectl_queue_messages",
			"Messages in a queue, per status.", []string{"queue", "qos", "stage", "status"}, nil),
		queueState: prometheus.NewDesc("queuectl_queue_state",
			"1 for a queue's state (ACTIVE, WAITING, BLOCKED, ERROR, STOPPED, UNCONFIGURED, EMPTY), 0 for the others.",
			[]string{"queue", "qos", "stage", "state"}, nil),
		blacklisted: prometheus.NewDesc("queuectl_blacklisted_messages",
			"Messages NDLV on the blacklist: a node died delivering each of them engine.blacklisting.crashes times.", nil, nil),
		stuck: prometheus.NewDesc("queuectl_tx_stuck_messages",
			"Prepared (PEND) messages of transactional sends that the check-back gave up on: an operator must commit or roll them back.", nil, nil),
		nodeUp: prometheus.NewDesc("queuectl_node_up",
			"1 while this node's engine delivers, 0 while it starts (crash recovery) or stops.", []string{"node"}, nil),
		nodeAlive: prometheus.NewDesc("queuectl_node_alive",
			"1 while a node serving the store is alive (its heartbeat within cluster.lease_ttl), 0 for a node that stopped or died, listed as node list lists it.",
			[]string{"node"}, nil),
		leasesHeld: prometheus.NewDesc("queuectl_leases_held",
			"Queues whose unexpired lease a node holds: the queues it delivers.", []string{"node"}, nil),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queuectl_deliveries_total",
			Help: "Delivery attempts to a receiver, by result: delivered, transient or permanent error. Receivers that are not configured share the receiver (unconfigured).",
		}, []string{"receiver", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queuectl_delivery_errors_total",
			Help: "Failed deliveries to a receiver, by error class: transient, permanent, or crash (the node died while delivering). Receivers that are not configured share the receiver (unconfigured).",
		}, []string{"receiver", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "queuectl_delivery_duration_seconds",
			Help:    "Time from DLNG to the outcome of a delivery attempt to a receiver. Receivers that are not configured share the receiver (unconfigured).",
			Buckets: durationBuckets,
		}, []string{"receiver"}),
		recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queuectl_crash_recoveries_total",
			Help: "Messages that crash recovery found DLNG on a dead node, by result: requeued (a blacklist candidate) or blacklisted.",
		}, []string{"result"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queuectl_tx_checks_total",
			Help: "Check-backs with the producers of prepared messages, by result: commit, rollback, or unanswered (unknown, an error, a timeout; the last before stuck included).",
		}, []string{"result"}),
	}
	c.receivers = map[string]bool{}
	for _, r := range opts.Receivers {
		c.receivers[r] = true
		for _, res := range []string{ResultDelivered, ResultTransient, ResultPermanent} {
			c.deliveries.WithLabelValues(r, res)
		}
		for _, class := range errorClasses {
			c.errors.WithLabelValues(r, class)
		}
		c.duration.WithLabelValues(r)
	}
	for _, res := range []string{RecoveryRequeued, RecoveryBlacklisted} {
		c.recoveries.WithLabelValues(res)
	}
	for _, res := range []string{CheckCommit, CheckRollback, CheckUnanswered} {
		c.checks.WithLabelValues(res)
	}
	c.registry = prometheus.NewRegistry()
	c.registry.MustRegister(c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return c
}

// Handler serves the metrics, in the Prometheus text format or, to a
// scraper that asks for it (Accept: application/openmetrics-text), in
// OpenMetrics. A scrape that cannot read the store fails with 500, so that
// the scraper's up metric shows it.
func (c *Collector) Handler() http.Handler {
	return promhttp.HandlerFor(c.registry, promhttp.HandlerOpts{
		ErrorLog:          slogErrorLog{c.opts.Logger},
		ErrorHandling:     promhttp.HTTPErrorOnError,
		EnableOpenMetrics: true,
	})
}

// Observe counts one engine event; it is engine.Options.Observe's shape.
// Outcomes count for outbound messages only: the inbound stage calls no
// receiver.
func (c *Collector) Observe(ev engine.Event) {
	m := ev.Message
	switch ev.Kind {
	case engine.EventDelivered, engine.EventWaiting, engine.EventFailed:
		if m == nil || m.Stage != domain.Outbound {
			return
		}
		receiver := c.receiverLabel(m.Receiver)
		result := ResultDelivered
		if ev.Kind != engine.EventDelivered {
			result = string(m.ErrorClass)
			c.errors.WithLabelValues(receiver, result).Inc()
		}
		c.deliveries.WithLabelValues(receiver, result).Inc()
		c.duration.WithLabelValues(receiver).Observe(ev.Duration.Seconds())
	case engine.EventRequeued, engine.EventBlacklisted:
		result := RecoveryRequeued
		if ev.Kind == engine.EventBlacklisted {
			result = RecoveryBlacklisted
		}
		c.recoveries.WithLabelValues(result).Inc()
		if m != nil && m.Stage == domain.Outbound {
			c.errors.WithLabelValues(c.receiverLabel(m.Receiver), string(domain.ErrorCrash)).Inc()
		}
	case engine.EventCheckCommitted:
		c.checks.WithLabelValues(CheckCommit).Inc()
	case engine.EventCheckRolledBack:
		c.checks.WithLabelValues(CheckRollback).Inc()
	case engine.EventCheckUnanswered, engine.EventStuck:
		c.checks.WithLabelValues(CheckUnanswered).Inc()
	}
}

// receiverLabel is a receiver's label value: its name when it is
// configured, UnconfiguredReceiver otherwise.
func (c *Collector) receiverLabel(receiver string) string {
	if c.receivers[receiver] {
		return receiver
	}
	return UnconfiguredReceiver
}

// Describe sends the descriptions of every metric the Collector has.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queueMessages
	ch <- c.queueState
	ch <- c.blacklisted
	ch <- c.stuck
	ch <- c.nodeUp
	ch <- c.nodeAlive
	ch <- c.leasesHeld
	c.deliveries.Describe(ch)
	c.errors.Describe(ch)
	c.duration.Describe(ch)
	c.recoveries.Describe(ch)
	c.checks.Describe(ch)
}

// Collect reads the store's gauges and sends them with the counters.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	up := 0.0
	if c.opts.Running != nil && c.opts.Running() {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.nodeUp, prometheus.GaugeValue, up, c.opts.Node)
	c.deliveries.Collect(ch)
	c.errors.Collect(ch)
	c.duration.Collect(ch)
	c.recoveries.Collect(ch)
	c.checks.Collect(ch)

	ctx, cancel := context.WithTimeout(context.Background(), c.opts.ScrapeTimeout)
	defer cancel()
	c.collectQueues(ctx, ch)
	c.collectBlacklisted(ctx, ch)
	c.collectNodes(ctx, ch)
}

// collectNodes sends the liveness and the leases of every node the store
// lists, seen from the store — so that any node's scrape shows the whole
// cluster. A node listed with several incarnations (it restarted) is alive
// if one of them is, and holds the leases of all of them.
func (c *Collector) collectNodes(ctx context.Context, ch chan<- prometheus.Metric) {
	nodes, err := c.opts.Source.Nodes(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.nodeAlive, err)
		return
	}
	alive, leases := map[string]float64{}, map[string]float64{}
	for _, n := range nodes {
		if _, ok := alive[n.ID]; !ok {
			alive[n.ID] = 0
		}
		if n.Alive {
			alive[n.ID] = 1
		}
		leases[n.ID] += float64(n.Queues)
	}
	for id, v := range alive {
		ch <- prometheus.MustNewConstMetric(c.nodeAlive, prometheus.GaugeValue, v, id)
		ch <- prometheus.MustNewConstMetric(c.leasesHeld, prometheus.GaugeValue, leases[id], id)
	}
}

// collectQueues sends every status and every state of every queue, zeros
// too, so that a series does not vanish when its queue drains or changes
// state, and the stuck transactions of all queues.
func (c *Collector) collectQueues(ctx context.Context, ch chan<- prometheus.Metric) {
	var stuck int64
	err := c.opts.Source.Queues(ctx, admin.QueueFilter{}, func(q *domain.Queue) error {
		stuck += q.Stuck
		for _, st := range domain.Statuses {
			ch <- prometheus.MustNewConstMetric(c.queueMessages, prometheus.GaugeValue, float64(q.Counts[st]),
				q.Name, string(q.QoS), string(q.Stage), string(st))
		}
		for _, st := range domain.QueueStates {
			v := 0.0
			if q.State == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.queueState, prometheus.GaugeValue, v,
				q.Name, string(q.QoS), string(q.Stage), string(st))
		}
		return nil
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.queueMessages, err)
		ch <- prometheus.NewInvalidMetric(c.stuck, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.stuck, prometheus.GaugeValue, float64(stuck))
}

// collectBlacklisted counts the blacklisted messages through the NDLV
// status index: the cost is that of the NDLV messages, which wait for an
// operator, not of the store.
func (c *Collector) collectBlacklisted(ctx context.Context, ch chan<- prometheus.Metric) {
	yes, n := true, 0
	f := admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes}
	err := c.opts.Source.Messages(ctx, f, func(*domain.Message) error {
		n++
		return nil
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.blacklisted, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.blacklisted, prometheus.GaugeValue, float64(n))
}

// slogErrorLog hands promhttp's errors to the server's log.
type slogErrorLog struct{ log *slog.Logger }

func (l slogErrorLog) Println(v ...any) {
	l.log.Error("serving metrics failed", "err", strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
