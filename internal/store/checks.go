package store

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// CheckStore is the engine's seam for the check-back of transactional sends
// (§9): a producer that prepared a message (PEND) and died before it
// committed or rolled back is asked what became of its transaction. Like
// the rest of EngineStore it works in batches: one transaction claims the
// messages due for a check, the engine asks their producers, and one
// transaction records the answers.
type CheckStore interface {
	// ClaimChecks marks the PEND messages that are due for a check-back, in
	// the queues whose lease p.Node holds, and returns them. A message is
	// due p.After after it was prepared, and then p.Interval after its last
	// check, until it is stuck. The mark is the check's time (LastCheckAt):
	// no node claims the message again within p.Interval, so in a cluster
	// each message is checked once per interval, by the node that owns its
	// queue.
	ClaimChecks(ctx context.Context, p ClaimChecksParams) (*ClaimChecksResult, error)
	// RecordChecks applies the answers of claimed checks (RecordCheck), each
	// a compare-and-set on PEND and on the claim: an answer to a message
	// that is no longer PEND — a producer's commit won the race — or that
	// was claimed again since is reported in Conflicts and changes nothing;
	// the others apply.
	RecordChecks(ctx context.Context, p RecordChecksParams) (*RecordChecksResult, error)
}

// ClaimChecksParams describe one claim of check-backs.
type ClaimChecksParams struct {
	Node Node
	// After is tx.check_after: how long after it was prepared a message is
	// first checked.
	After time.Duration
	// Interval is tx.check_interval: how long after its last check a
	// message is checked again.
	Interval time.Duration
	// Limit is the most messages to claim.
	Limit int
}

// ClaimChecksResult is what a claim of check-backs found.
type ClaimChecksResult struct {
	// Claimed holds the messages to check, as stored after the claim: each
	// one's LastCheckAt is the claim's time, which its outcome carries back.
	Claimed []*domain.Message
	// NextDue is when the next check is due — of a message the claim left,
	// or the next of one it claimed; zero when none is waiting for a check.
	NextDue time.Time
	// More reports that the claim stopped at its limit with more due.
	More bool
}

// CheckKind says what a check-back found out.
type CheckKind int

// The outcomes of a check-back (§9).
const (
	// CheckCommit: the producer answered commit; PEND→TBDL.
	CheckCommit CheckKind = iota + 1
	// CheckRollback: the producer answered rollback; the message is
	// deleted and the audit log keeps the rollback.
	CheckRollback
	// CheckUnanswered: the producer answered unknown, gave no answer, or one
	// that is not an answer; the message stays PEND, and is stuck once it
	// was asked tx.max_checks times.
	CheckUnanswered
)

// CheckOutcome is what became of one claimed check-back.
type CheckOutcome struct {
	ID string
	// CheckedAt is the claimed message's LastCheckAt: the outcome applies
	// only to the check that was claimed.
	CheckedAt time.Time
	Kind      CheckKind
	// Answer is what last_answer shows: commit, rollback or unknown, or
	// why there was no answer (timeout, HTTP 500, invalid answer, ...).
	Answer string
	// Detail says where the engine asked and what went wrong, for the
	// history entry (and for the audit entry of a rollback).
	Detail string
	// GiveUp marks the message stuck whatever its count: no check can ever
	// be answered (its sender has no check_url).
	GiveUp bool
}

// RecordChecksParams describe one batch of check-back outcomes.
type RecordChecksParams struct {
	Node     Node
	Outcomes []CheckOutcome
	// MaxChecks is tx.max_checks: the unanswered check that reaches it
	// marks the message stuck.
	MaxChecks int
}

// RecordChecksResult is what RecordChecks did.
type RecordChecksResult struct {
	// Applied holds, per outcome in order, the message as stored after it
	// (a rolled-back message as it was when it was deleted); nil where the
	// outcome was refused.
	Applied []*domain.Message
	// Conflicts holds, per refused outcome, why (an error wrapping
	// domain.ErrConflict).
	Conflicts map[string]error
}
