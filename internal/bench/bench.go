// Package bench measures this build's engine on this machine (§14): it sends
// messages through the whole pipeline of the real engine — inbound,
// routing, outbound, delivery — and reports throughput, latency, commits,
// CPU and store growth per message. `queuectl bench` and the Go benchmarks
// run it, with the engine that `queuectl serve` runs.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// Receiver is the name of the receiver every bench message goes to.
const Receiver = "BENCH"

// sendBatch is how many messages one send commits, as `send --jsonl` does.
const sendBatch = 1000

// Options describe one run.
type Options struct {
	// Store is where the run sends its messages: a fresh store, so that
	// its growth is the run's.
	Store engine.Store
	// Config supplies the engine settings (workers, eo_window, retry, …);
	// its receivers and routes are replaced by the bench receiver.
	Config   *config.Config
	Messages int
	QoS      domain.QoS
	// Queues is, for EO, the parallelism of both stages
	// (EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL), for EOIO the number of
	// app queues.
	Queues int
	// Payload is each message's size in bytes.
	Payload int
	// ReceiverType is discard, or http: a local HTTP sink the run starts.
	ReceiverType string
	// Progress, if set, hears how many messages are delivered, now and then.
	Progress func(delivered, total int)
	Logger   *slog.Logger
}

// Result is what a run measured; its JSON form is that of `bench -o json`.
type Result struct {
	Messages          int     `json:"messages"`
	Seconds           float64 `json:"seconds"`
	Throughput        float64 `json:"throughput"`
	SendRate          float64 `json:"send_rate"`
	LatencyP50        float64 `json:"latency_p50_ms"`
	LatencyP99        float64 `json:"latency_p99_ms"`
	CommitsPerMessage float64 `json:"commits_per_message"`
	// StatementsPerMessage and RoundTripsPerMessage count the statements
	// sent to a store on a server (PostgreSQL), and the network round trips
	// they took (statements pipelined together take one); an embedded store
	// has neither.
	StatementsPerMessage *float64 `json:"statements_per_message,omitempty"`
	RoundTripsPerMessage *float64 `json:"round_trips_per_message,omitempty"`
	// PageWritesPerCommit and PageBytesPerCommit are the page writes
	// (meta page included) and the bytes of changed pages of an average
	// commit, for an embedded store (PageWriter).
	PageWritesPerCommit *float64 `json:"page_writes_per_commit,omitempty"`
	PageBytesPerCommit  *float64 `json:"page_bytes_per_commit,omitempty"`
	CPUPerMessage       float64  `json:"cpu_us_per_message"`
	StoreBytes          float64  `json:"store_bytes_per_message"`
	QoS                 string   `json:"qos"`
	Queues              int      `json:"queues"`
	Payload             int      `json:"payload"`
	Receiver            string   `json:"receiver"`
	Workers             int      `json:"workers"`
	EOWindow            int      `json:"eo_window"`
}

// Sizer is a store that can tell how many bytes it uses.
type Sizer interface {
	Size(ctx context.Context) (int64, error)
}

// PageWriter is an embedded store that counts the pages its commits write.
type PageWriter interface {
	PageWrites() (writes, bytes uint64)
}

// RoundTripper is a store on a server that counts the statements it sends
// and its network round trips.
type RoundTripper interface {
	Statements() uint64
	RoundTrips() uint64
}

// Run sends opts.Messages messages through a running engine and measures
// until the last one is delivered.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Messages < 1 {
		return nil, domain.Invalidf("--messages %d must be at least 1", opts.Messages)
	}
	if opts.Queues < 1 {
		return nil, domain.Invalidf("--queues %d must be at least 1", opts.Queues)
	}
	if opts.Queues > 9999 && opts.QoS == domain.EO {
		return nil, domain.Invalidf("--queues %d: EO parallelism is at most 9999", opts.Queues)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := refuseInUse(ctx, opts.Store); err != nil {
		return nil, err
	}
	cfg := *opts.Config
	rc, stopSink, err := benchReceiver(opts.ReceiverType)
	if err != nil {
		return nil, err
	}
	defer stopSink()
	cfg.Receivers = map[string]config.Receiver{Receiver: rc}
	cfg.Routes = nil
	if err := tune(ctx, opts); err != nil {
		return nil, err
	}

	r := newRecorder(opts.Messages, opts.Progress)
	eng, err := engine.Configured(opts.Store, &cfg, engine.Options{Logger: opts.Logger, Observe: r.observe})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- eng.Run(runCtx) }()
	stopEngine := func() error {
		stop()
		return <-done
	}
	select {
	case <-r.ready:
	case err := <-done:
		return nil, fmt.Errorf("the engine did not start: %w", err)
	}

	res, err := measure(ctx, opts, r)
	if serr := stopEngine(); err == nil && serr != nil {
		err = fmt.Errorf("the engine stopped with an error: %w", serr)
	}
	if err != nil {
		return nil, err
	}
	res.Workers, res.EOWindow = cfg.Engine.Workers, cfg.Engine.EOWindow
	return res, nil
}

// refuseInUse refuses a store that holds messages, before the run changes
// anything: the engine it runs would deliver, retry or fail them as if they
// were the run's own, and the run's figures would not be its own either.
func refuseInUse(ctx context.Context, st store.Store) error {
	found := false
	err := st.View(ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{Limit: 1}, func(*domain.Message) error {
			found = true
			return store.ErrStop
		})
	})
	if err != nil && !errors.Is(err, store.ErrStop) {
		return err
	}
	if found {
		return domain.WithHint(domain.ErrInvalid,
			"the store holds messages: bench runs the engine, which would deliver them as its own; it runs only on a store without messages",
			"leave out --store to measure on a fresh temporary store, or give a new file or an empty database")
	}
	return nil
}

// measure sends the messages and waits for the last delivery.
func measure(ctx context.Context, opts Options, r *recorder) (*Result, error) {
	role, err := domain.ParseRole(opts.Config.Engine.Role)
	if err != nil {
		return nil, err
	}
	svc := local.New(opts.Store, local.Options{Role: role, Actor: "bench", MaxPayload: int64(opts.Config.Engine.MaxPayload),
		RouteAtSend: true, Routes: opts.Config.RoutingRules()})
	size0, err := storeSize(ctx, opts.Store)
	if err != nil {
		return nil, err
	}
	commits0, cpu0 := opts.Store.Commits(), cpuTime()
	trips := roundTrips(opts.Store)
	pw, _ := opts.Store.(PageWriter)
	var writes0, bytes0 uint64
	if pw != nil {
		writes0, bytes0 = pw.PageWrites()
	}
	payload := make([]byte, opts.Payload)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}

	start := time.Now()
	reqs := make([]domain.SendRequest, 0, sendBatch)
	for sent := 0; sent < opts.Messages; {
		reqs = reqs[:0]
		for i := sent; i < min(sent+sendBatch, opts.Messages); i++ {
			req := domain.SendRequest{QoS: opts.QoS, Sender: "BENCH", Receivers: []string{Receiver}, Interface: "Bench", Payload: payload}
			if opts.QoS == domain.EOIO {
				req.AppQueue = fmt.Sprintf("Q%d", i%opts.Queues)
			}
			reqs = append(reqs, req)
		}
		msgs, err := svc.Send(ctx, reqs)
		if err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		r.sent(msgs, time.Now())
		sent += len(msgs)
	}
	sendTime := time.Since(start)

	select {
	case <-r.all:
	case err := <-r.failed:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	elapsed := r.last.Sub(start)
	cpu := cpuTime() - cpu0
	commits := opts.Store.Commits() - commits0
	var statementsPerMessage, tripsPerMessage *float64
	if trips != nil {
		now := roundTrips(opts.Store)
		per := func(n uint64) *float64 {
			v := float64(n) / float64(opts.Messages)
			return &v
		}
		statementsPerMessage = per(now.statements - trips.statements)
		tripsPerMessage = per(now.roundTrips - trips.roundTrips)
	}
	var writesPerCommit, bytesPerCommit *float64
	if pw != nil && commits > 0 {
		writes1, bytes1 := pw.PageWrites()
		w, b := float64(writes1-writes0)/float64(commits), float64(bytes1-bytes0)/float64(commits)
		writesPerCommit, bytesPerCommit = &w, &b
	}
	size1, err := storeSize(ctx, opts.Store)
	if err != nil {
		return nil, err
	}
	n := float64(opts.Messages)
	p50, p99 := r.percentiles()
	return &Result{
		Messages:             opts.Messages,
		Seconds:              elapsed.Seconds(),
		Throughput:           n / elapsed.Seconds(),
		SendRate:             n / sendTime.Seconds(),
		LatencyP50:           p50,
		LatencyP99:           p99,
		CommitsPerMessage:    float64(commits) / n,
		StatementsPerMessage: statementsPerMessage,
		RoundTripsPerMessage: tripsPerMessage,
		PageWritesPerCommit:  writesPerCommit,
		PageBytesPerCommit:   bytesPerCommit,
		CPUPerMessage:        float64(cpu.Microseconds()) / n,
		StoreBytes:           float64(size1-size0) / n,
		QoS:                  string(opts.QoS),
		Queues:               opts.Queues,
		Payload:              opts.Payload,
		Receiver:             opts.ReceiverType,
	}, nil
}

// tune spreads EO traffic over opts.Queues queues per stage.
func tune(ctx context.Context, opts Options) error {
	if opts.QoS != domain.EO || opts.Queues == 1 {
		return nil
	}
	role, err := domain.ParseRole(opts.Config.Engine.Role)
	if err != nil {
		return err
	}
	return opts.Store.Update(ctx, func(w store.Writer) error {
		if err := w.SetParam(domain.Param{Name: placement.ParamEOInbound, Sub: role.Subparameter(), Value: opts.Queues}); err != nil {
			return err
		}
		return w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Sub: Receiver, Value: opts.Queues})
	})
}

// benchReceiver configures the receiver of the run: discard, or an HTTP
// sink on a loopback port that accepts every message.
func benchReceiver(kind string) (config.Receiver, func(), error) {
	switch kind {
	case "", "discard":
		return config.Receiver{Type: "discard"}, func() {}, nil
	case "http":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return config.Receiver{}, nil, fmt.Errorf("start the HTTP sink: %w", err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		rc := config.Receiver{Type: "http", URLs: []string{"http://" + l.Addr().String() + "/in"}, Timeout: 30 * time.Second}
		return rc, func() { _ = srv.Close() }, nil
	}
	return config.Receiver{}, nil, domain.Invalidf("--receiver %q must be discard or http", kind)
}

// traffic is what a RoundTripper counted.
type traffic struct{ statements, roundTrips uint64 }

// roundTrips reads a RoundTripper's counts; nil for other stores.
func roundTrips(st store.Store) *traffic {
	rt, ok := st.(RoundTripper)
	if !ok {
		return nil
	}
	return &traffic{statements: rt.Statements(), roundTrips: rt.RoundTrips()}
}

func storeSize(ctx context.Context, st store.Store) (int64, error) {
	s, ok := st.(Sizer)
	if !ok {
		return 0, nil
	}
	return s.Size(ctx)
}

// recorder follows the engine's events: when each message was delivered.
type recorder struct {
	total    int
	progress func(delivered, total int)
	ready    chan struct{}
	all      chan struct{}
	failed   chan error

	mu        sync.Mutex
	sentAt    map[string]time.Time // inbound id → when its send committed
	early     map[string]time.Time // delivered before its send returned
	latencies []time.Duration
	last      time.Time
	readyOnce sync.Once
	failOnce  sync.Once
}

func newRecorder(total int, progress func(int, int)) *recorder {
	return &recorder{
		total: total, progress: progress, ready: make(chan struct{}), all: make(chan struct{}),
		failed: make(chan error, 1), sentAt: make(map[string]time.Time, total), early: map[string]time.Time{},
		latencies: make([]time.Duration, 0, total),
	}
}

func (r *recorder) observe(ev engine.Event) {
	switch ev.Kind {
	case engine.EventRecovered:
		r.readyOnce.Do(func() { close(r.ready) })
	case engine.EventDelivered:
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		sent := ev.Message.SentID()
		if at, ok := r.sentAt[sent]; ok {
			r.latencies = append(r.latencies, now.Sub(at))
			delete(r.sentAt, sent)
		} else {
			// The engine can deliver a batch before Send returns.
			r.early[sent] = now
		}
		r.delivered(now)
	case engine.EventFailed, engine.EventWaiting:
		r.failOnce.Do(func() {
			r.failed <- fmt.Errorf("message %s: %s: %s", ev.Message.ID, ev.Kind, ev.Message.Error)
		})
	}
}

// delivered counts one delivery; r.mu is held.
func (r *recorder) delivered(now time.Time) {
	n := len(r.latencies) + len(r.early)
	if n > r.total {
		return
	}
	r.last = now
	if r.progress != nil && (n%1000 == 0 || n == r.total) {
		r.progress(n, r.total)
	}
	if n == r.total {
		close(r.all)
	}
}

// sent records when a batch's send committed.
func (r *recorder) sent(msgs []admin.Sent, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		if done, ok := r.early[m.ID]; ok {
			// Delivered before the send returned: its latency is at most
			// that, counted as zero.
			delete(r.early, m.ID)
			r.latencies = append(r.latencies, max(done.Sub(at), 0))
			continue
		}
		r.sentAt[m.ID] = at
	}
}

// percentiles returns the 50th and 99th latency percentiles in ms.
func (r *recorder) percentiles() (float64, float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.latencies) == 0 {
		return 0, 0
	}
	l := slices.Clone(r.latencies)
	slices.Sort(l)
	at := func(p float64) float64 {
		i := min(int(p*float64(len(l))), len(l)-1)
		return float64(l[i].Microseconds()) / 1000
	}
	return at(0.50), at(0.99)
}
