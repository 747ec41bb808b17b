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
	"maps"
	"net/http"
	"os"
	"slices"
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
	EventTakenBack   EventKind = "taken_back"  // a crash taken back: the node recovered as dead came back
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
	// receivers only while it is. Each incarnation has its own;
	// monotonic is its clock.
	lease     *lease
	monotonic func() time.Time
	// recovered says crash recovery returned blacklist candidates: the
	// claim loop delivers them first, each alone.
	recovered atomic.Bool
	// names are the receivers' names, sorted: what the node claims for
	// and publishes (§8) — an empty list, never nil, for none.
	names []string
	// unconfigured are the receivers not configured here that routing
	// sent messages to, each logged once.
	unconfiguredMu sync.Mutex
	unconfigured   map[string]bool
	// outage is when the store began to fail, while it does: the log says
	// once that it is unreachable, and once that it is back.
	outageMu sync.Mutex
	outage   time.Time
	// beforeCall, set by tests only, runs on a worker between the wait for
	// a fresh lease and the last check before the receiver call: where a
	// pause can fall.
	beforeCall func()
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
	e.monotonic = opts.Monotonic
	e.lease = newLease(e.cfg.LeaseTTL, e.monotonic)
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
	e.names = store.ReceiverList(slices.Collect(maps.Keys(e.receivers)))
	e.unconfigured = map[string]bool{}
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
//
// An outage of the store does not end Run (§11): the engine starts no
// delivery while it lasts, keeps the outcomes of those in flight and
// records them when the store is back — or, when other nodes took its
// queues over meanwhile, joins again as a new incarnation and recovers its
// old one without counting a crash. Run ends only when ctx does, or with a
// configuration error (another live node with its id).
func (e *Engine) Run(ctx context.Context) error {
	var previous *store.Node
	for {
		node, dead, err := e.join(ctx, previous)
		if err != nil {
			return err
		}
		err = e.serve(ctx, node, dead, previous)
		if !errors.Is(err, store.ErrFenced) || ctx.Err() != nil {
			return err
		}
		e.log.Warn("this node's queues were taken over while it could not reach the store; it joins again",
			"node", e.node, "incarnation", node.Incarnation)
		previous = &node
	}
}

// join starts a new incarnation, trying again while the store fails. It
// gives up only on ctx, or when the store refuses the node (its id is in
// use by a live node). previous, if set, is this process's own incarnation
// that was fenced: the crashes counted against it are kept for serve to
// take back.
func (e *Engine) join(ctx context.Context, previous *store.Node) (store.Node, []store.Node, error) {
	var before store.Node
	if previous != nil {
		before = *previous
	}
	for failures := 1; ; failures++ {
		e.lease = newLease(e.cfg.LeaseTTL, e.monotonic)
		joinedAt := e.lease.now()
		// A join that began runs to its end: a stop comes after it.
		sctx, cancel := e.storeContext(context.WithoutCancel(ctx))
		joined, err := e.st.Join(sctx, store.JoinParams{ID: e.node, Address: e.cfg.Address, TTL: e.cfg.LeaseTTL,
			Heartbeat: e.cfg.Heartbeat, Receivers: e.names, Previous: before})
		cancel()
		if err == nil {
			e.storeOK()
			e.lease.alive(joinedAt)
			return joined.Node, joined.Dead, nil
		}
		if errors.Is(err, domain.ErrInvalid) || ctx.Err() != nil {
			return store.Node{}, nil, fmt.Errorf("join the store: %w", err)
		}
		e.storeFailed("joining", err)
		select {
		case <-ctx.Done():
			return store.Node{}, nil, fmt.Errorf("join the store: %w", err)
		case <-time.After(backoff(failures)):
		}
	}
}

// serve runs one incarnation: crash recovery of the dead incarnations —
// previous, this process's own earlier one, without counting crashes, and
// taking back those another node's recovery of it counted — then the
// services and the claim loop.
//
// The heartbeats, and the watch that cancels deliveries when they stop
// reaching the store, last as long as the incarnation holds anything:
// through the drain of a clean stop, until its Leave (§4).
func (e *Engine) serve(ctx context.Context, node store.Node, dead []store.Node, previous *store.Node) error {
	services, cancelServices := context.WithCancel(ctx)
	defer cancelServices()
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	var wg, lived sync.WaitGroup
	defer lived.Wait()
	defer endLife()
	defer wg.Wait()
	lived.Go(func() { e.lease.watch(life) })
	// Recovery runs to its end, whatever signal comes meanwhile: the loop
	// then stops cleanly.
	bg := context.WithoutCancel(ctx)
	if previous != nil && !slices.Contains(dead, *previous) {
		// Recovered by another node already: what it counted is taken back.
		dead = append([]store.Node{*previous}, dead...)
	}
	if err := e.recoverDead(bg, node, dead, previous); err != nil {
		return fmt.Errorf("crash recovery: %w", err)
	}
	hctx, cancel := e.storeContext(bg)
	err := e.restoreHolds(hctx, node)
	cancel()
	if err != nil {
		return fmt.Errorf("restore the HOLD rule: %w", err)
	}
	e.emit(Event{Kind: EventRecovered})
	e.log.Info("engine started", "node", e.node, "incarnation", node.Incarnation, "workers", e.cfg.Workers,
		"eo_window", e.cfg.EOWindow, "receivers", len(e.receivers), "role", string(e.cfg.Role))

	failed := make(chan error, 1)
	wg.Go(func() { e.retentionLoop(services) })
	wg.Go(func() { e.checker(node).run(services) })
	lived.Go(func() {
		if err := e.heartbeatLoop(life, ctx, node); err != nil {
			failed <- err
		}
	})
	l := newLoop(e, node)
	err = l.run(ctx, failed)
	cancelServices()
	wg.Wait()
	if err != nil {
		return err
	}
	lctx, cancel := e.storeContext(context.WithoutCancel(ctx))
	defer cancel()
	err = e.st.Leave(lctx, node)
	endLife()
	lived.Wait()
	if err != nil {
		// Not a passing unavailability: the node did not stop cleanly.
		return fmt.Errorf("the node could not leave the store cleanly; other nodes take its queues over after cluster.lease_ttl: %v", err)
	}
	e.log.Info("engine stopped", "node", e.node)
	return nil
}

// storeContext bounds one store call of the engine (Config.storeTimeout).
func (e *Engine) storeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.storeTimeout())
}

// storeFailed notes that a store call failed: the first failure of an
// outage is logged as the outage's start, the others only at debug level.
func (e *Engine) storeFailed(what string, err error) {
	e.outageMu.Lock()
	first := e.outage.IsZero()
	if first {
		e.outage = time.Now()
	}
	e.outageMu.Unlock()
	if first {
		e.log.Error("the store failed; the engine starts no delivery until it answers again, and keeps the outcomes "+
			"of those in flight", "while", what, "err", err)
		return
	}
	e.log.Debug("the store failed again", "while", what, "err", err)
}

// storeOK notes that a store call succeeded, which ends an outage.
func (e *Engine) storeOK() {
	e.outageMu.Lock()
	began := e.outage
	e.outage = time.Time{}
	e.outageMu.Unlock()
	if !began.IsZero() {
		e.log.Info("the store answers again", "after", time.Since(began).Round(time.Millisecond).String())
	}
}
