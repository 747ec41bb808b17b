// Package engine moves messages through their stages (§3, §4): it delivers
// the head of each queue, one message per queue at a time and many queues
// at once, routes inbound messages to their receivers, retries transient
// errors, blocks EOIO queues behind failed heads, recovers from crashes with
// blacklisting, and purges old final messages.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// Options configure an engine.
type Options struct {
	Store  store.Store
	Config *config.Config
	// NodeID names this process in history entries; default hostname-pid.
	NodeID string
	Logger *slog.Logger
	// Now is the clock; tests may replace it.
	Now func() time.Time
	// Rand draws EO queue slots; default math/rand.
	Rand func(n int) int
	// OnEvent, if set, is called after each change the engine makes, from
	// the goroutine that made it. Tests wait on it instead of sleeping.
	OnEvent func(Event)
	// Receivers replaces the receivers built from Config (tests).
	Receivers map[string]receiver.Receiver
}

// EventKind says what an Event reports.
type EventKind string

// The events an engine reports.
const (
	EventRouted      EventKind = "routed"      // an inbound message was DLVD and its outbound messages created
	EventDelivered   EventKind = "delivered"   // an outbound message was DLVD
	EventWaiting     EventKind = "waiting"     // a transient error: WAIT
	EventFailed      EventKind = "failed"      // NDLV
	EventBlacklisted EventKind = "blacklisted" // NDLV by crash blacklisting
	EventRequeued    EventKind = "requeued"    // TBDL by crash recovery: a blacklist candidate
	EventRecovered   EventKind = "recovered"   // crash recovery finished
	EventHandedBack  EventKind = "handed_back" // returned to TBDL at shutdown
	EventIdle        EventKind = "idle"        // nothing in flight and nothing ready
)

// Event is one thing the engine did.
type Event struct {
	Kind    EventKind
	Message *domain.Message
	// Duration is, for the outcome of a delivery (delivered, waiting,
	// failed), how long the message was DLNG, on the engine's clock.
	Duration time.Duration
}

// Engine delivers messages. Create it with New and run it with Run.
type Engine struct {
	st        store.Store
	cfg       *config.Config
	node      string
	log       *slog.Logger
	now       func() time.Time
	placer    placement.Placer
	receivers map[string]receiver.Receiver
	onEvent   func(Event)

	signal   chan struct{}
	mu       sync.Mutex
	pending  map[string]bool
	scanAll  bool
	stopping atomic.Bool
}

// New builds an engine from its options; it checks the receivers' settings.
func New(opts Options) (*Engine, error) {
	if opts.Store == nil || opts.Config == nil {
		return nil, fmt.Errorf("engine: a store and a configuration are required")
	}
	role, err := domain.ParseRole(opts.Config.Engine.Role)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		st: opts.Store, cfg: opts.Config, node: opts.NodeID, log: opts.Logger, now: opts.Now,
		receivers: opts.Receivers, onEvent: opts.OnEvent,
		signal: make(chan struct{}, 1), pending: map[string]bool{}, scanAll: true,
	}
	if e.node == "" {
		e.node = opts.Config.Engine.NodeID
	}
	if e.node == "" {
		host, _ := os.Hostname()
		e.node = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = func() time.Time { return time.Now().UTC() }
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = randIntN
	}
	e.placer = placement.Placer{Role: role, Rand: rnd}
	if e.receivers == nil {
		e.receivers = make(map[string]receiver.Receiver, len(opts.Config.Receivers))
		for name, rc := range opts.Config.Receivers {
			r, err := receiver.New(name, rc)
			if err != nil {
				return nil, err
			}
			e.receivers[name] = r
		}
	}
	return e, nil
}

// NodeID returns the name this engine writes into history entries.
func (e *Engine) NodeID() string { return e.node }

// Notify wakes the engine to look at the named queues (all queues when none
// is named), e.g. after messages were sent to them.
func (e *Engine) Notify(queues ...string) {
	e.mu.Lock()
	if len(queues) == 0 {
		e.scanAll = true
	}
	for _, q := range queues {
		e.pending[q] = true
	}
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

// takePending returns the queues to look at, and whether to look at all.
func (e *Engine) takePending() (map[string]bool, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, all := e.pending, e.scanAll
	e.pending, e.scanAll = map[string]bool{}, false
	return p, all
}

func (e *Engine) emit(kind EventKind, m *domain.Message) {
	e.emitEvent(Event{Kind: kind, Message: m})
}

func (e *Engine) emitEvent(ev Event) {
	if e.onEvent != nil {
		e.onEvent(ev)
	}
}

// Run recovers what a crashed process left DLNG, then delivers until ctx
// ends, then shuts down cleanly: deliveries in flight get
// engine.shutdown_timeout to finish; those still running are cancelled and
// handed back to TBDL without counting as a crash.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.recoverCrashed(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("crash recovery: %w", err)
	}
	e.log.Info("engine started", "node", e.node, "workers", e.cfg.Engine.Workers,
		"receivers", len(e.receivers), "role", e.cfg.Engine.Role)
	retentionDone := make(chan struct{})
	go func() {
		defer close(retentionDone)
		e.retentionLoop(ctx)
	}()
	err := e.dispatch(ctx)
	<-retentionDone
	e.log.Info("engine stopped", "node", e.node)
	return err
}
