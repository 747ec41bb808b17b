// Package store defines the persistence seam of queuectl: one Store interface
// that the embedded bbolt store and the PostgreSQL store implement, and that
// the conformance suite in storetest checks. No store's own types leak out.
package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// Store keeps messages, their payloads and history, per-queue order and
// counters, tuning parameters and the audit log.
type Store interface {
	// View runs fn in a read-only transaction that sees one consistent snapshot.
	// Values handed to fn are copies: fn may keep them after View returns.
	View(ctx context.Context, fn func(Reader) error) error
	// Update runs fn in a read-write transaction. When fn returns an error
	// nothing of it is stored. Concurrent Updates may be grouped into one
	// commit, so fn may run more than once: it must act only through the
	// Writer and must not depend on state outside it.
	Update(ctx context.Context, fn func(Writer) error) error
	// Commits returns how many write transactions the store has committed
	// since it was opened. Benchmarks report it as commits per message.
	Commits() uint64
	// Close releases the store. Pending Updates finish first.
	Close() error
}

// Reader reads within a transaction. A missing object is an error wrapping
// domain.ErrNotFound.
type Reader interface {
	// Message returns one message, without payload and history.
	Message(id string) (*domain.Message, error)
	// MessageByKey returns the message sender sent with an idempotency key
	// (§2); none is not found.
	MessageByKey(sender, key string) (*domain.Message, error)
	// Payload returns a message's payload, byte for byte.
	Payload(id string) ([]byte, error)
	// PayloadVersions returns how many versions of its payload a message
	// has: 1 until an edit (Writer.EditPayload) stores another.
	PayloadVersions(id string) (int, error)
	// PayloadVersion returns version n of a message's payload, byte for
	// byte: 1 is the payload it was sent with, the last one what Payload
	// returns. A version the message does not have is not found.
	PayloadVersion(id string, n int) ([]byte, error)
	// History returns a message's status changes, oldest first.
	History(id string) ([]domain.HistoryEntry, error)
	// Messages calls fn for each message matching f, in id order (which is
	// creation order), starting after f.After and stopping after f.Limit
	// messages when it is above zero. With f.Statuses set it reads the status
	// index, so its cost is that of the rows it returns. If fn returns
	// ErrStop, Messages stops and returns nil.
	Messages(f MessageFilter, fn func(*domain.Message) error) error
	// QueueMessages calls fn for the messages of one queue in seq order,
	// starting after seq p.AfterSeq. With p.Open only messages still open (not
	// PEND, DLVD or FAIL) are read, so the cost does not grow with what the
	// queue has already delivered. ErrStop ends the walk early.
	QueueMessages(queue string, p QueueMessagesParams, fn func(*domain.Message) error) error
	// Head returns the first open message of the queue in seq order that
	// still holds the queue up: an EO message that went NDLV by a permanent
	// error is passed over (§4). It returns nil, nil for a queue with no such
	// message.
	Head(queue string) (*domain.Message, error)
	// Queue returns one queue's record.
	Queue(name string) (*QueueRecord, error)
	// Queues calls fn for each queue in name order, starting after the name
	// `after`. ErrStop ends the walk early.
	Queues(after string, fn func(*QueueRecord) error) error
	// Param returns one tuning value; ok is false when it is not set.
	Param(name, sub string) (value int, ok bool, err error)
	// Params calls fn for each tuning value set, ordered by name and sub.
	Params(fn func(domain.Param) error) error
	// Audit calls fn for the audit entries matching f, oldest first.
	Audit(f AuditFilter, fn func(*domain.AuditEntry) error) error
	// EOIO returns the state of the EOIO switch procedure (§10):
	// domain.DefaultEOIO in a store never switched.
	EOIO() (domain.EOIOSwitch, error)
	// ReceiverCode returns the code the store assigned a receiver, the four
	// hex digits of its outbound queue names (§3); a receiver that has none
	// yet is not found.
	ReceiverCode(receiver string) (string, error)
	// ReceiverCodes calls fn for each receiver that has a code, in receiver
	// name order. ErrStop ends the walk early.
	ReceiverCodes(fn func(receiver, code string) error) error
}

// Writer changes the store within a transaction. Every method keeps the
// per-queue per-status counters, the status index and the queue order in the
// same transaction as the change.
type Writer interface {
	Reader
	// Insert stores a new message and its payload. The message must have an
	// id, queue, qos, stage and status; the store sets Size and assigns Seq
	// (on m itself, as stored) from the queue's sequence unless the status is PEND (a PEND message gets its
	// seq when it leaves PEND), creates the queue record on first use, and
	// records h as the first history entry (h.To is the message's status).
	// An id that exists already is a conflict. A key (m.Key) that the
	// sender's messages hold already is an error wrapping ErrKeyExists —
	// at Insert, or, when a concurrent transaction stored it first, when
	// the transaction commits: Update then runs fn again, which finds it.
	Insert(m *domain.Message, payload []byte, h domain.HistoryEntry) error
	// Transition changes one message's status by compare-and-set: it fails
	// with an error wrapping domain.ErrConflict, naming the current status,
	// when the status is not one of p.From, and with domain.ErrNotFound when
	// there is no such message. (The engine's writes, which also check the
	// lease epoch, go through EngineStore.)
	// It returns the message as stored after the change.
	Transition(p TransitionParams) (*domain.Message, error)
	// Delete removes a message with its payload, history, index entries and
	// counts (transactional rollback, purge).
	Delete(id string) error
	// SetStopped stops or starts delivery of a queue (the queue must exist).
	SetStopped(queue string, stopped bool) error
	// DeleteQueue removes the record of an empty queue: one that holds no
	// message at all — none of its counters above zero, the messages that
	// passed through an inbound queue included. A queue that holds messages
	// is refused with an error wrapping ErrQueueHolds (and
	// domain.ErrConflict) naming how many; one that does not exist is not
	// found. The queue's next message creates it again, as on its first
	// use — on the PostgreSQL store also a send that placed a message in
	// it while the delete ran: it re-creates the record when it commits,
	// so no message is ever left in a queue without one.
	DeleteQueue(name string) error
	// SetParam stores a tuning value; UnsetParam removes it (not set is fine).
	SetParam(p domain.Param) error
	UnsetParam(name, sub string) error
	// AppendAudit appends an entry to the audit log and sets its Seq.
	AppendAudit(e *domain.AuditEntry) error
	// DeleteAuditBefore deletes audit entries older than cutoff, oldest
	// (lowest seq) first, at most max of them, and returns how many it
	// deleted (engine.retention.audit, §6). It stops at the first entry at
	// or after the cutoff: entries are appended in time order.
	DeleteAuditBefore(cutoff time.Time, max int) (int, error)
	// SetEOIO stores the state of the EOIO switch procedure (§10).
	SetEOIO(s domain.EOIOSwitch) error
	// Route does the receiver determination of one TBDL inbound message
	// (§3) as a claim does: one receiver moves it on to that receiver's
	// queue, keeping its id, row and history; several split it (it ends
	// DLVD, one new message per receiver, sharing its payload); none make
	// it NDLV.
	Route(p RouteParams) (*RouteResult, error)
	// EditPayload replaces a message's payload by a new version, by
	// compare-and-set on its status (p.From) and on its current version
	// (p.Version; another is an error wrapping ErrVersionChanged). The
	// earlier versions are kept (PayloadVersion); the message keeps its
	// status, queue and seq; its size becomes the new payload's, and
	// p.History is recorded from and to its status. A message whose
	// payload is shared with others (the messages a split made) gets a
	// payload of its own; theirs does not change.
	EditPayload(p EditPayloadParams) (*domain.Message, error)
	// Move takes a message out of its queue and puts it at the end of
	// p.Queue, by compare-and-set on its status as Transition does: its
	// status stays, it gets a new seq in the queue it joins (none while
	// PEND), and h is recorded as a history entry from and to its status.
	// The queue is created on first use, as Insert creates it; one of
	// another qos or stage is refused. DLNG messages do not move. (The
	// error queues of §10, and a message committed after a switch.)
	Move(p MoveParams) (*domain.Message, error)
	// PutReceiverCode gives receiver the code, unless the receiver has a
	// code already or another receiver has this one: ok is false then and
	// nothing changes. A code, once given, is the receiver's for good.
	// (AssignCode holds the rule of which code a receiver gets.)
	PutReceiverCode(receiver, code string) (ok bool, err error)
}

// EditPayloadParams describe one EditPayload.
type EditPayloadParams struct {
	ID string
	// From lists the statuses the message may have now; anything else is a conflict.
	From []domain.Status
	// Version is the version the edit replaces: the message's current one.
	Version int
	Payload []byte
	// History is recorded as the edit's history entry; the store fills in
	// From and To (both the message's status) and, when zero, At.
	History domain.HistoryEntry
}

// ErrVersionChanged marks an EditPayload whose Version is no longer the
// message's current one: another edit came first.
var ErrVersionChanged = domain.Errorf(domain.ErrConflict, "the payload has another version now")

// MoveParams describe one Move.
type MoveParams struct {
	ID string
	// From lists the statuses the message may have now; anything else is a conflict.
	From  []domain.Status
	Queue string
	// History is recorded as the move's history entry; the store fills in
	// From and To (both the message's status) and, when zero, At.
	History domain.HistoryEntry
}

// TransitionParams describe one compare-and-set status change.
type TransitionParams struct {
	ID string
	// From lists the statuses the message may have now; anything else is a conflict.
	From []domain.Status
	To   domain.Status
	// Update, if set, changes fields other than the status before the message
	// is stored (attempts, error, next_attempt_at, node, crashes, ...). It
	// must not change the id, queue, seq or status.
	Update func(m *domain.Message)
	// History is recorded as the change's history entry; the store fills in
	// From, To and, when zero, At.
	History domain.HistoryEntry
}

// QueueMessagesParams select a part of one queue.
type QueueMessagesParams struct {
	AfterSeq uint64
	Open     bool
	// AppQueue, when set, selects only the messages of that app queue: in
	// a queue app queues share (§10), with Open, at the cost of the rows
	// returned.
	AppQueue string
	Limit    int
}

// ErrQueueHolds marks a DeleteQueue refused because the queue holds
// messages.
var ErrQueueHolds = domain.Errorf(domain.ErrConflict, "the queue holds messages")

// QueueHolds returns the error of a DeleteQueue refused: the queue name,
// how many messages it holds and of which statuses.
func QueueHolds(q *QueueRecord) error {
	n, parts := int64(0), []string{}
	for _, s := range domain.Statuses {
		if c := q.Counts[s]; c > 0 {
			n += c
			parts = append(parts, fmt.Sprintf("%d %s", c, s))
		}
	}
	word := "messages"
	if n == 1 {
		word = "message"
	}
	return fmt.Errorf("queue %s holds %d %s (%s): %w", q.Name, n, word, strings.Join(parts, ", "), ErrQueueHolds)
}

// Holds says whether a queue record counts any message.
func (q *QueueRecord) Holds() bool {
	for _, n := range q.Counts {
		if n != 0 {
			return true
		}
	}
	return q.PassedOver != 0 || q.Stuck != 0
}

// ErrKeyExists marks an Insert of a message whose idempotency key its
// sender used already (§2): the caller reads that message (MessageByKey)
// and decides whether the send repeats it or conflicts with it.
var ErrKeyExists = domain.Errorf(domain.ErrConflict, "the sender used this key already")

// QueueRecord is what the store keeps of a physical queue.
type QueueRecord struct {
	Name     string
	QoS      domain.QoS
	Stage    domain.Stage
	Receiver string // outbound queues: the receiver they deliver to
	Stopped  bool
	Epoch    uint64
	// Owner is the id of the node whose unexpired lease holds the queue
	// (§11): on the embedded store, the engine of the process that holds
	// the file, once it joined; empty when no node holds it.
	Owner string
	// Counts has the number of messages per status, kept in the same
	// transaction as every change; statuses with no messages are absent.
	Counts map[domain.Status]int64
	// PassedOver counts the open messages that left the queue's order
	// (domain.PassedOver: EO messages NDLV by a permanent error or by
	// blacklisting); they are part of Counts[NDLV] but hold nothing up.
	PassedOver int64
	// Stuck counts the PEND messages the check-back gave up on
	// (domain.CountsStuck); they are part of Counts[PEND].
	Stuck int64
	// LastSeq is the last seq assigned in this queue.
	LastSeq   uint64
	CreatedAt time.Time
}

// Blocked says whether NDLV messages hold the queue up (§4): those that
// PassedOver counts do not.
func (q *QueueRecord) Blocked() bool {
	return q.Counts[domain.StatusNDLV] > q.PassedOver
}

// HeadRank is the highest domain.HeadPriority that an open message of the
// queue has, as its counters tell: on an EO queue 2 when a message blocks
// it and 1 when one WAITs, else 0. The head is the first open message of
// that rank in seq order: the first open message, when it has the rank.
func (q *QueueRecord) HeadRank() int {
	switch {
	case q.QoS != domain.EO:
		return 0
	case q.Blocked():
		return 2
	case q.Counts[domain.StatusWAIT] > 0:
		return 1
	}
	return 0
}

// Starts says whether a message of the queue may start now — be routed, or
// delivered for the first time: not while the queue is stopped or blocked,
// nor while a message of it WAITs for its retry (§3, §4).
func (q *QueueRecord) Starts() bool {
	return !q.Stopped && !q.Blocked() && q.Counts[domain.StatusWAIT] == 0
}

// Room is how many more messages of the queue may be DLNG at once (§3): one
// for an EOIO queue with nothing in flight, up to window for an EO queue,
// none for a stopped or blocked queue.
func (q *QueueRecord) Room(window int) int64 {
	if q.Stopped || q.Blocked() {
		return 0
	}
	limit := int64(window)
	if q.QoS == domain.EOIO {
		limit = 1
	}
	return limit - q.Counts[domain.StatusDLNG]
}

// MessageFilter selects messages for Reader.Messages. Empty fields select all.
// List-valued fields match any of their values.
type MessageFilter struct {
	Statuses  []domain.Status
	Queues    []string
	Receivers []string
	Senders   []string
	AppQueues []string
	// ErrorText matches messages whose error contains it, ignoring case.
	ErrorText string
	// CreatedBefore and CreatedAfter bound created_at (exclusive); zero is no bound.
	CreatedBefore time.Time
	CreatedAfter  time.Time
	// Blacklisted, when set, matches only messages with that blacklisted flag.
	Blacklisted *bool
	// Stuck, when set, matches only messages that are (or are not) stuck
	// transactions (domain.CountsStuck).
	Stuck *bool
	// Key, when set, matches only messages sent with this idempotency key.
	Key string
	// After is the id cursor: only messages with a greater id are returned
	// (a smaller one with Reverse).
	After string
	// Reverse walks newest first: in descending id order.
	Reverse bool
	// Limit stops after that many messages; 0 is no limit.
	Limit int
}

// AuditFilter selects audit entries.
type AuditFilter struct {
	Since    time.Time
	Actor    string
	AfterSeq uint64
	Limit    int
}

// QueueLocker is a Writer that locks the rows of queues ahead (the
// PostgreSQL store), so that a transaction which changes several queues
// takes their locks in one order — name order, in one statement (§14) —
// and never waits for another in turn: a send batch over many app queues,
// an operator's bulk action. A store that commits one writer at a time has
// no order to keep and is no QueueLocker.
type QueueLocker interface {
	// LockQueues locks, in name order, the queues named and the queues
	// of the messages ids, those that exist, as the transaction's later
	// reads and changes of them would.
	LockQueues(names, ids []string) error
}

// LockQueues locks the queues names and those of the messages ids ahead,
// in name order, where w is a QueueLocker; elsewhere it does nothing.
func LockQueues(w Writer, names, ids []string) error {
	l, ok := w.(QueueLocker)
	if !ok || len(names)+len(ids) == 0 {
		return nil
	}
	return l.LockQueues(names, ids)
}

// SwitchLocker is a Writer that orders the EOIO switch procedure (§10)
// against the writers that place EOIO messages with a lock of its own (the
// PostgreSQL store): a switch takes it first, exclusively, before it reads
// the state it changes, so that two switches never both hold it shared
// and wait for each other to give it up.
type SwitchLocker interface {
	LockSwitch() error
}

// LockSwitch takes the switch's lock exclusively where w is a
// SwitchLocker; elsewhere it does nothing.
func LockSwitch(w Writer) error {
	if l, ok := w.(SwitchLocker); ok {
		return l.LockSwitch()
	}
	return nil
}
