// Package engine moves messages through their stages (§3, §4): it claims
// ready messages from the store in batches, routes inbound messages to their
// receivers, delivers outbound messages concurrently, records the outcomes
// in batches, retries transient errors, blocks queues behind failed heads,
// recovers from crashes with blacklisting, purges old final messages, and
// checks back with the producers of prepared messages that were neither
// committed nor rolled back (§9).
//
// The engine talks to the store through store.EngineStore: one transaction
// claims many ready messages (each DLNG, durably, before its receiver is
// called), one transaction records many outcomes and claims what became
// ready, so commits per message fall toward zero under load.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// Store is what the engine needs of a store: the engine seam for delivery,
// and the admin seam for retention.
type Store interface {
	store.Store
	store.EngineStore
}

// Options configure an engine.
type Options struct {
	Store  Store
	Config Config
	// Receivers are the configured receivers by name (receiver.Build).
	Receivers map[string]receiver.Receiver
	Logger    *slog.Logger
	// Rand draws EO queue slots; default math/rand.
	Rand func(n int) int
	// Clock measures how long deliveries take; default time.Now. Tests
	// move it by hand.
	Clock func() time.Time
	// Monotonic is the local clock the engine measures its lease's
	// freshness on; default time.Now. Tests move it by hand.
	Monotonic func() time.Time
	// Observe, if set, hears every change the engine made, once it is
	// durable: serve feeds its metrics and its readiness from it, the demo
	// and the tests wait on it. It is called from the engine's goroutines,
	// one event at a time per goroutine, and must not block.
	Observe func(Event)
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
	EventRecovered   EventKind = "recovered"   // crash recovery at start finished: the engine delivers
	EventHandedBack  EventKind = "handed_back" // returned to TBDL at shutdown
	EventIdle        EventKind = "idle"        // nothing in flight and nothing ready
	// The check-back of transactional sends (§9), once its outcome is stored.
	EventCheckCommitted  EventKind = "check_committed"   // the producer answered commit: PEND→TBDL (or HOLD)
	EventCheckRolledBack EventKind = "check_rolled_back" // the producer answered rollback: deleted
	EventCheckUnanswered EventKind = "check_unanswered"  // no answer, or unknown: still PEND
	EventStuck           EventKind = "stuck"             // unanswered tx.max_checks times: stuck, for an operator
)

// Event is one thing the engine did.
type Event struct {
	Kind    EventKind
	Message *domain.Message
	// Duration is, for the outcome of a delivery (delivered, waiting,
	// failed), how long the receiver took.
	Duration time.Duration
}

// Engine delivers messages. Create it with New and run it with Run.
type Engine struct {
	st        Store
	cfg       Config
	node      string
	log       *slog.Logger
	router    placement.Router
	receivers map[string]receiver.Receiver
	observe   func(Event)
	clock     func() time.Time
	// poke wakes the claim loop and checkPoke the checker (Notify).
	poke      chan struct{}
	checkPoke chan struct{}

	// inFlight is how many messages the node has DLNG, for heartbeats.
	inFlight atomic.Int64
	// lease says whether the node's lease is known fresh: workers call
	// receivers only while it is.
	lease *lease
	// recovered says crash recovery returned blacklist candidates: the
	// claim loop delivers them first, each alone.
	recovered atomic.Bool
}

// New builds an engine from its options.
func New(opts Options) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("engine: a store is required")
	}
	if err := opts.Config.check(); err != nil {
		return nil, err
	}
	e := &Engine{
		st: opts.Store, cfg: opts.Config, node: opts.Config.NodeID, log: opts.Logger,
		receivers: opts.Receivers, observe: opts.Observe, clock: opts.Clock, poke: make(chan struct{}, 1),
		checkPoke: make(chan struct{}, 1),
	}
	e.lease = newLease(e.cfg.LeaseTTL, opts.Monotonic)
	if e.clock == nil {
		e.clock = time.Now
	}
	if e.node == "" {
		host, _ := os.Hostname()
		e.node = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.receivers == nil {
		e.receivers = map[string]receiver.Receiver{}
	}
	rnd := opts.Rand
	if rnd == nil {
		rnd = randIntN
	}
	e.router = placement.Router{Placer: placement.Placer{Role: e.cfg.Role, Rand: rnd}, Rules: e.cfg.Routes}
	return e, nil
}

// NodeID returns the name this engine runs under.
func (e *Engine) NodeID() string { return e.node }

// Notify wakes the engine to claim again — deliveries and check-backs —
// e.g. after a clock moved.
func (e *Engine) Notify() {
	for _, c := range []chan struct{}{e.poke, e.checkPoke} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// checker is the engine's check-back service for node (§9).
func (e *Engine) checker(node store.Node) *checker {
	return &checker{
		st: e.st, node: node, placer: e.router.Placer, cfg: e.cfg.Tx, log: e.log, emit: e.emit, poke: e.checkPoke,
		client: &http.Client{Transport: receiver.NewTransport()},
		committed: func() {
			select {
			case e.poke <- struct{}{}:
			default:
			}
		},
	}
}

func (e *Engine) emit(ev Event) {
	if e.observe != nil {
		e.observe(ev)
	}
}

// Run joins the store as a new incarnation of the node, recovers what dead
// incarnations left DLNG, then delivers until ctx ends, then shuts down
// cleanly: deliveries in flight get engine.shutdown_timeout to finish; those
// still running are cancelled and handed back to TBDL without counting as a
// crash, as are claimed messages not yet started.
func (e *Engine) Run(ctx context.Context) error {
	bg := context.WithoutCancel(ctx)
	joinedAt := e.lease.now()
	joined, err := e.st.Join(bg, store.JoinParams{ID: e.node, Address: e.cfg.Address, TTL: e.cfg.LeaseTTL})
	if err != nil {
		return fmt.Errorf("join the store: %w", err)
	}
	node := joined.Node
	e.lease.alive(joinedAt)
	if err := e.recoverDead(bg, node, joined.Dead); err != nil {
		return fmt.Errorf("crash recovery: %w", err)
	}
	if err := e.restoreHolds(bg, node); err != nil {
		return fmt.Errorf("restore the HOLD rule: %w", err)
	}
	e.emit(Event{Kind: EventRecovered})
	e.log.Info("engine started", "node", e.node, "workers", e.cfg.Workers, "eo_window", e.cfg.EOWindow,
		"receivers", len(e.receivers), "role", string(e.cfg.Role))

	services, cancelServices := context.WithCancel(ctx)
	defer cancelServices()
	failed := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { e.retentionLoop(services) })
	wg.Go(func() { e.checker(node).run(services) })
	wg.Go(func() {
		if err := e.heartbeatLoop(services, node); err != nil {
			failed <- err
		}
	})
	l := newLoop(e, node)
	err = l.run(ctx, failed)
	cancelServices()
	wg.Wait()
	if err == nil {
		err = e.st.Leave(bg, node)
	}
	e.log.Info("engine stopped", "node", e.node)
	return err
}
