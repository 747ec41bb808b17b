package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// EngineStore is the store seam of the delivery engine (§3, §4, §11, §14).
// Admin commands read and change a store through View and Update, one
// closure per transaction; the engine instead talks to the store in batches
// through these declarative methods, so that a claim of many messages can be
// one statement and a batch of outcomes one round trip. Each method is one
// transaction.
//
// A node is one engine process; each start of it is a new incarnation. Every
// engine write is fenced: an outcome applies only to a message that is still
// DLNG for the incarnation that claimed it, under the lease epoch its queue
// had when it was claimed. A node that lost a queue's lease — paused,
// partitioned, declared dead and recovered — therefore changes nothing.
type EngineStore interface {
	// CheckStore claims and records the check-backs of transactional
	// sends (§9), on the same leases as delivery.
	CheckStore
	// Now returns the store's clock: on PostgreSQL the database clock, so
	// that the nodes of a cluster agree on what is due and what has expired.
	Now(ctx context.Context) (time.Time, error)
	// Join starts a new incarnation of node p.ID and returns it with the
	// incarnations that died before it and still need crash recovery. The
	// embedded store gives the one process that holds its file every
	// queue's lease, under an epoch that each Join increments.
	Join(ctx context.Context, p JoinParams) (*Joined, error)
	// Heartbeat tells the store that the node is alive, renews the leases it
	// holds and balances queues across live nodes. It returns the
	// incarnations found dead since, for the caller to Recover. A node whose
	// heartbeat is overdue (a database outage, a pause) but that no other
	// node declared dead yet is alive again, its leases intact
	// (HeartbeatResult.Revived). A node that was declared dead — its queues
	// taken over, or a later incarnation of its id started — gets an error
	// wrapping ErrFenced: that incarnation is over, and the process must
	// join again to go on. The embedded store has no other nodes: its
	// heartbeat changes nothing.
	Heartbeat(ctx context.Context, p HeartbeatParams) (*HeartbeatResult, error)
	// Claim does the inbound stage and starts the outbound one, in one
	// transaction. First it routes ready inbound messages with p.Router
	// (§3: receiver determination calls no receiver, so an inbound message
	// goes from TBDL through DLNG to DLVD, its outbound messages created,
	// in the transaction) — so that the outbound messages it creates can be
	// claimed at once. Then it marks ready outbound messages DLNG for the
	// node — durably, before any receiver is called — and returns them, each
	// with the lease epoch it was claimed under and its payload. It works
	// only in queues whose lease the node holds and that are not stopped:
	// at most one message of an EOIO queue in flight (the head, when
	// nothing of the queue is DLNG), up to p.Window messages of an EO queue
	// and none while the EO queue WAITs or is blocked (but for its due WAIT
	// messages), and follows p.Candidates for blacklist candidates. Queues
	// are served in turn, so that a busy queue cannot starve others.
	Claim(ctx context.Context, p ClaimParams) (*ClaimResult, error)
	// Record applies outcomes, each a compare-and-set on DLNG, the claiming
	// incarnation and the lease epoch, restores the HOLD rule in the queues
	// they touch, and then — in the same transaction — claims as Claim does
	// when p.Claim is set, so that an EOIO queue's next head rides in the
	// transaction of its previous outcome. An outcome whose compare-and-set
	// fails is reported in RecordResult.Conflicts and changes nothing; one
	// whose message cannot be read is reported in RecordResult.Damaged; the
	// others apply.
	Record(ctx context.Context, p RecordParams) (*RecordResult, error)
	// Recover runs crash recovery (§4) for one dead incarnation: each message
	// it left DLNG gets crashes += 1 and returns to TBDL as a blacklist
	// candidate, or — at p.Crashes, when it was the dead incarnation's only
	// DLNG message — goes NDLV, blacklisted. It happens once per dead
	// incarnation: when two nodes race, one recovers and the other gets an
	// empty result. The store keeps a record of each crash it counted
	// (CountedCrash), until the dead incarnation's process joins again and
	// takes them back (p.Outage) or another incarnation of its id joins.
	Recover(ctx context.Context, p RecoverParams) (*RecoverResult, error)
	// Leave ends an incarnation that stopped cleanly: it gives up its leases
	// so that other nodes take its queues at once, and hands back to TBDL,
	// in the same transaction, what it still holds DLNG — a clean stop
	// counts no attempt and no crash (§4), and leaves nothing for a
	// recovery to find.
	Leave(ctx context.Context, node Node) error
	// Reconcile compares what the store says the incarnation holds DLNG
	// with what the node knows it holds (p.Held) and hands back to TBDL,
	// counting no attempt and no crash, each message the node does not
	// know of: the claims whose commit the node could not confirm (a lost
	// reply), which no receiver was ever given. The caller must have no
	// claim under way.
	Reconcile(ctx context.Context, p ReconcileParams) (*ReconcileResult, error)
	// SerialWrites says the store commits one write transaction at a time
	// (the embedded store: one file, one writer). A claim of the engine
	// then rides with the outcomes it records — one commit for both —
	// rather than waiting for them in a commit of its own; on a store that
	// commits transactions side by side the two overlap (§14).
	SerialWrites() bool
	// Wakeups delivers a value when messages may have become ready for
	// delivery: sent, committed, resent, released, a queue started, a lease
	// gained. It is a hint; the engine also claims on its own schedule.
	Wakeups() <-chan struct{}
}

// ErrFenced marks an engine write refused because the node's incarnation or
// lease is no longer current: another node took over.
var ErrFenced = domain.Errorf(domain.ErrConflict, "this node's lease was taken over")

// ErrDamaged marks a store whose stored data is damaged (a record that
// does not decode). Such an error is also of kind domain.ErrUnavailable, but
// it may concern one message only: the engine records the outcomes of
// others apart from it.
var ErrDamaged = errors.New("the store is damaged")

// ErrOverdue marks an engine write refused because the node's last
// heartbeat is older than its TTL: until a heartbeat renews it (or another
// node declares it dead) it changes nothing. It is a passing condition,
// like a database that cannot be reached.
var ErrOverdue = domain.Errorf(domain.ErrUnavailable, "this node's heartbeat is overdue")

// Node is one incarnation of an engine process.
type Node struct {
	// ID is the name the node runs under (serve --node-id): history entries
	// and the DLNG message's node field show it.
	ID string
	// Incarnation numbers the starts of all nodes; a restarted node with
	// the same ID gets a new one.
	Incarnation uint64
}

// JoinParams describe a node that starts.
type JoinParams struct {
	ID string
	// Address is where the node serves its API, for `node list`.
	Address string
	// TTL is how long the node counts as alive without a heartbeat
	// (cluster.lease_ttl); zero means the default, 10s. The embedded store
	// has no other nodes and ignores it.
	TTL time.Duration
	// Heartbeat is how often the node heartbeats (cluster.heartbeat);
	// zero means the default, 1s. A node that starts under the id of an
	// incarnation that still looks alive watches it for a few heartbeats:
	// if it heartbeats, the id is in use and Join fails with an error
	// wrapping domain.ErrInvalid that names its address; if not, it died
	// (a restart after a crash) and the new incarnation supersedes it.
	Heartbeat time.Duration
	// Receivers are the receivers the node has configured (§8), published
	// in its node record: a cluster gives a node only the outbound queues
	// of its receivers (§11), and `queue list` shows a queue whose
	// receiver no live node has as UNCONFIGURED. None (nil or empty)
	// holds no outbound queue.
	Receivers []string
	// Previous is, for a process that joins again after its incarnation
	// was fenced (§4: a node that comes back did not die), that
	// incarnation: the record of the crashes that recoveries counted
	// against it is kept for the Recover (Outage) that takes them back.
	// Join drops that record for the node's other earlier incarnations,
	// whose processes died and never come back.
	Previous Node
}

// Joined is the result of Join.
type Joined struct {
	Node Node
	// Dead lists incarnations that left messages DLNG and were not recovered.
	Dead []Node
}

// HeartbeatParams renew a node's liveness and leases.
type HeartbeatParams struct {
	Node Node
	// TTL is how long the heartbeat and the leases hold (cluster.lease_ttl).
	TTL time.Duration
	// InFlight is how many messages the node has DLNG now, for `node list`.
	InFlight int
	// Stopping says the node drains for a clean stop (§4): the heartbeat
	// renews its liveness and the leases it holds, so that what it has in
	// flight is recorded under them, but takes no queue.
	Stopping bool
}

// HeartbeatResult is what a heartbeat found.
type HeartbeatResult struct {
	// Dead lists incarnations whose heartbeat expired and that were not
	// recovered. After an outage that the heartbeating node suffered too,
	// a node whose heartbeat expired during it gets a TTL to come back
	// before it is listed.
	Dead []Node
	// Queues is how many queues the node holds now.
	Queues int
	// Revived says the node's own heartbeat was overdue and no other node
	// had declared it dead: it is alive again, with its leases.
	Revived bool
}

// CandidateMode says how a claim treats blacklist candidates: ready
// messages with crashes > 0, which §4 delivers alone.
type CandidateMode int

const (
	// CandidatesAsAny claims candidates like any other message (blacklisting
	// is disabled).
	CandidatesAsAny CandidateMode = iota
	// CandidatesSkip leaves candidates unclaimed and counts them in
	// ClaimResult.Candidates, so that the engine can drain what is in flight.
	CandidatesSkip
	// CandidatesAlone claims one candidate and nothing else; the engine asks
	// for it when the node has nothing in flight.
	CandidatesAlone
)

// ClaimParams describe one claim.
type ClaimParams struct {
	Node Node
	// Limit is the most outbound messages to claim: each is delivered by
	// a worker of the node.
	Limit int
	// Router routes inbound messages, up to RouteLimit of them; with no
	// Router the claim routes nothing.
	Router     *placement.Router
	RouteLimit int
	// Window is the most messages of one EO queue DLNG at once (engine.eo_window).
	Window     int
	Candidates CandidateMode
	// Receivers are the receivers the node has configured (§8). The claim
	// starts outbound messages of these receivers only: the queues of any
	// other receiver are passed over as if they had nothing ready — their
	// messages stay TBDL or WAIT, untouched and uncounted (not in More,
	// Candidates or NextDue) — until a node that has the receiver claims
	// them. None (nil or empty) claims no outbound message. Routing is not
	// affected: it calls no receiver.
	Receivers []string
}

// Delivers says whether a claim with these parameters may start messages
// of queue q (§8): an inbound queue always, an outbound queue when its
// receiver is one of p.Receivers. It is the receiver's part of what a queue
// may start now, beside QueueRecord.Starts and Room; the PostgreSQL store
// says it in SQL, and storetest holds a case for each branch.
func (p *ClaimParams) Delivers(q *QueueRecord) bool {
	return q.Stage == domain.Inbound || slices.Contains(p.Receivers, q.Receiver)
}

// Claimed is one outbound message a claim made DLNG.
type Claimed struct {
	// Message is the message as stored after the claim.
	Message *domain.Message
	// Epoch is the lease epoch of its queue at the claim; its outcome
	// carries it back.
	Epoch   uint64
	Payload []byte
}

// ClaimResult is what a claim found.
type ClaimResult struct {
	Claimed []Claimed
	// Candidates counts ready blacklist candidates left unclaimed
	// (CandidatesSkip).
	Candidates int
	// NextDue is the earliest next_attempt_at of a WAIT message in the
	// node's queues that is not due yet; zero when there is none.
	NextDue time.Time
	// Now is the store's clock at the claim, which NextDue is on.
	Now time.Time
	// More reports that the claim stopped at a limit with more perhaps ready.
	More bool
	// Routed holds the inbound messages the claim routed, as stored after:
	// DLVD, or NDLV when no receiver was found.
	Routed []*domain.Message
	// Created holds the outbound messages routing created.
	Created []*domain.Message
	// Damaged names messages the claim skipped because they could not be
	// read (a damaged record, an index naming a message that is gone), so
	// that one bad record does not stop every delivery.
	Damaged map[string]error
}

// OutcomeKind says what became of a claimed message.
type OutcomeKind int

// The outcomes of §4.
const (
	// OutcomeDelivered: DLNG→DLVD.
	OutcomeDelivered OutcomeKind = iota + 1
	// OutcomeRetry: DLNG→WAIT, a transient error with attempts left.
	OutcomeRetry
	// OutcomeFailed: DLNG→NDLV, a permanent error or no attempts left.
	OutcomeFailed
	// OutcomeHandBack: DLNG→TBDL at a clean stop; the attempt does not count.
	OutcomeHandBack
)

// Outcome is what became of one claimed message.
type Outcome struct {
	ID    string
	Epoch uint64
	Kind  OutcomeKind
	// Error and Class describe a Retry or a Failed outcome.
	Error string
	Class domain.ErrorClass
	// RetryIn is how long after the outcome, on the store's clock, a Retry
	// is due.
	RetryIn time.Duration
	// Reason is the history entry's reason.
	Reason string
}

// RecordParams describe one batch of outcomes.
type RecordParams struct {
	Node     Node
	Outcomes []Outcome
	// Claim, when set, claims in the same transaction, after the outcomes.
	Claim *ClaimParams
}

// RecordResult is what Record did.
type RecordResult struct {
	// Applied holds, per outcome in order, the message as stored after it;
	// nil where the outcome was refused.
	Applied []*domain.Message
	// Conflicts holds, per refused outcome, why (an error wrapping
	// domain.ErrConflict or ErrFenced).
	Conflicts map[string]error
	// Damaged holds, per outcome whose message the store cannot read (a
	// damaged record), why: one bad record does not stop the others. The
	// message is as the store has it — the embedded store writes nothing
	// to it and leaves it DLNG, for recovery; PostgreSQL may have applied
	// the outcome before it read the row back — and Applied is nil.
	Damaged map[string]error
	// Claim is the result of p.Claim.
	Claim *ClaimResult
}

// RecoverParams describe one crash recovery.
type RecoverParams struct {
	// Node is the incarnation that recovers (history entries name it).
	Node Node
	// Dead is the incarnation that died.
	Dead Node
	// Blacklisting and Crashes are engine.blacklisting.
	Blacklisting bool
	Crashes      int
	// Outage says the dead incarnation's process did not die: it lost its
	// lease — in an outage, a pause — and joined again (the caller is that
	// process, and joined with JoinParams.Previous set to Dead). Its
	// messages go back to TBDL counting no crash (§4); and when another
	// node recovered it first, every crash that recovery counted is taken
	// back (TakeBack), in the same transaction. The store also counts none
	// when the recovering node itself missed its heartbeats in the window
	// in which the dead one stopped heartbeating.
	Outage bool
}

// RecoverResult is what a recovery changed.
type RecoverResult struct {
	// Requeued went back to TBDL as blacklist candidates.
	Requeued []*domain.Message
	// Blacklisted went NDLV, blacklisted.
	Blacklisted []*domain.Message
	// HandedBack went back to TBDL counting no crash: the dead
	// incarnation lost its lease in an outage, not its process.
	HandedBack []*domain.Message
	// TakenBack had a crash taken back (RecoverParams.Outage), as stored
	// after: an earlier recovery counted it against the dead incarnation,
	// whose process came back.
	TakenBack []*domain.Message
}

// ReconcileParams describe one reconciliation.
type ReconcileParams struct {
	Node Node
	// Held are the ids of the messages the node knows it holds DLNG.
	Held []string
}

// ReconcileResult is what a reconciliation changed.
type ReconcileResult struct {
	// HandedBack went back to TBDL: DLNG for the node, unknown to it.
	HandedBack []*domain.Message
}
