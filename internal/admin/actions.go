package admin

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// Operator is what an operator can change (§4 operator transitions, §5).
// Every action is applied per target as a compare-and-set, in batches of one
// commit each, and writes its audit entry in the same transaction.
type Operator interface {
	// Act applies an action to message ids (or, for queue actions, queue
	// names). With p.DryRun nothing changes and the result says what would.
	Act(ctx context.Context, p ActParams) (*BulkResult, error)
	// Tuning lists the tuning values (§7) with the queues that exist for each.
	Tuning(ctx context.Context) ([]TuningEntry, error)
	// Tune sets or unsets a tuning value and returns the entry now in force.
	// It checks everything itself, the value included, so that every
	// refusal is audited the same way wherever the request came from.
	Tune(ctx context.Context, p TuneParams) (*TuningEntry, error)
	// Audit calls fn for the audit entries matching f, newest first (oldest
	// first with f.OldestFirst).
	Audit(ctx context.Context, f AuditFilter, fn func(*domain.AuditEntry) error) error
	// Purge deletes DLVD and FAIL messages last changed before the cutoffs.
	Purge(ctx context.Context, p PurgeParams) (*PurgeResult, error)
}

// Action names an operator action. The names are what the audit log records.
type Action string

// The operator actions of §5.
const (
	ActResend        Action = "message.resend"    // NDLV/WAIT → TBDL
	ActFail          Action = "message.fail"      // NDLV/WAIT/HOLD → FAIL
	ActRelease       Action = "blacklist.release" // blacklisted NDLV → TBDL, crashes reset
	ActBlacklistFail Action = "blacklist.fail"    // blacklisted NDLV → FAIL
	ActCommit        Action = "tx.commit"         // PEND → TBDL
	ActRollback      Action = "tx.rollback"       // PEND → deleted
	ActStop          Action = "queue.stop"        // delivery of a queue stops
	ActStart         Action = "queue.start"       // delivery of a queue resumes
	ActDeleteQueue   Action = "queue.delete"      // an empty queue is removed
)

// QueueAction reports whether a targets queue names rather than message ids.
func (a Action) QueueAction() bool { return a == ActStop || a == ActStart || a == ActDeleteQueue }

// Selects reports whether a queue action selects q when it acts on a
// selection: stop the queues that run, start the stopped ones, delete the
// empty ones.
func (a Action) Selects(q *domain.Queue) bool {
	if a == ActDeleteQueue {
		for _, n := range q.Counts {
			if n != 0 {
				return false
			}
		}
		return q.Stuck == 0
	}
	return a.QueueAction() && q.Stopped == (a == ActStart)
}

// ActParams describe one call of Act: one action, however many targets.
type ActParams struct {
	Action Action
	// Targets are message ids, or queue names for queue actions.
	Targets []string
	// Select, instead of Targets, names the targets by the filters of the
	// list commands (--all).
	Select *Selection
	// Reason is recorded in the history and audit log (message fail).
	Reason string
	DryRun bool
	// IncludeBlacklisted lets message.resend resend blacklisted messages
	// too, releasing them (their crashes reset to 0). Without it a resend
	// leaves them alone — blacklist.release is their verb: a selection
	// does not select them, and an id of one is skipped.
	IncludeBlacklisted bool
	// CountOnly leaves the result's ChangedIDs empty (Changed still counts
	// them), for a caller that prints a summary of a large selection.
	CountOnly bool
}

// Selection names an action's targets by a filter: the messages or queues
// the list commands would show, in id (name) order, up to and including
// Last, so that what appeared after the operator counted is left alone.
// A queue action selects only the queues it can change (Action.Selects).
// After and Limit of the filter are the service's to set.
type Selection struct {
	Messages *MessageFilter
	Queues   *QueueFilter
	// Last is the last target counted; empty is no bound.
	Last string
}

// BulkResult is the outcome of an action over many targets (§5).
type BulkResult struct {
	Changed    int       `json:"changed" yaml:"changed"`
	ChangedIDs []string  `json:"changed_ids" yaml:"changed_ids"`
	Skipped    []Skipped `json:"skipped" yaml:"skipped"`
	NotFound   []string  `json:"not_found" yaml:"not_found"`
	DryRun     bool      `json:"dry_run,omitempty" yaml:"dry_run,omitempty"`
	// BlacklistedChanged counts the changed messages that were
	// blacklisted: a resend with IncludeBlacklisted released them, their
	// crashes reset to 0.
	BlacklistedChanged int `json:"blacklisted_changed,omitempty" yaml:"blacklisted_changed,omitempty"`
	// BlacklistedLeft counts the blacklisted messages that a resend's
	// selection left alone (the caller that counted them sets it).
	BlacklistedLeft int `json:"blacklisted_left,omitempty" yaml:"blacklisted_left,omitempty"`
}

// Skipped is a target the action did not apply to, and why.
type Skipped struct {
	ID     string        `json:"id" yaml:"id"`
	Status domain.Status `json:"status" yaml:"status"`
	Reason string        `json:"reason" yaml:"reason"`
}

// Add merges another batch's result into r.
func (r *BulkResult) Add(o *BulkResult) {
	r.Changed += o.Changed
	r.BlacklistedChanged += o.BlacklistedChanged
	r.BlacklistedLeft += o.BlacklistedLeft
	r.ChangedIDs = append(r.ChangedIDs, o.ChangedIDs...)
	r.Skipped = append(r.Skipped, o.Skipped...)
	r.NotFound = append(r.NotFound, o.NotFound...)
}

// NewBulkResult returns an empty result whose lists encode as [] not null.
func NewBulkResult() *BulkResult {
	return &BulkResult{ChangedIDs: []string{}, Skipped: []Skipped{}, NotFound: []string{}}
}

// TuningEntry is one tuning value (§5: {param, sub, value, queues}).
type TuningEntry struct {
	Param  string   `json:"param" yaml:"param"`
	Sub    string   `json:"sub" yaml:"sub"`
	Value  int      `json:"value" yaml:"value"`
	Set    bool     `json:"set" yaml:"set"`
	Queues []string `json:"queues" yaml:"queues"`
}

// TuneParams describe one change of a tuning value (§7).
type TuneParams struct {
	Param string
	// Sub is the role (EO_INBOUND_PARALLEL) or a configured receiver
	// (EO_OUTBOUND_PARALLEL; empty: every receiver without its own value).
	Sub string
	// Value is the new value as the operator wrote it: a whole number from 1
	// to MaxParallel. Empty with Unset.
	Value string
	// Unset removes the value, so the default applies again; unsetting a
	// value that is not set is an error of kind not found.
	Unset bool
}

// MaxParallel is the largest tuning value (§7).
const MaxParallel = 9999

// AuditFilter selects audit entries. Empty fields select all.
type AuditFilter struct {
	Since  time.Time
	Actor  string
	Action string
	// Result is ok, conflict, denied or error.
	Result string
	// OldestFirst lists the oldest entry first; by default the newest is.
	OldestFirst bool
	// After is the cursor: the seq of the last entry of the previous page;
	// the list goes on after it in its own order (older entries, newest
	// first). 0 starts at the beginning.
	After uint64
	Limit int
}

// PurgeParams select what `purge` deletes.
type PurgeParams struct {
	DeliveredBefore time.Time
	FailedBefore    time.Time
	DryRun          bool
}

// PurgeResult counts what was (or would be) purged per status, and the
// empty queues removed with them: those no tuning value in force creates.
type PurgeResult struct {
	Counts map[domain.Status]int `json:"counts" yaml:"counts"`
	Queues int                   `json:"queues" yaml:"queues"`
	DryRun bool                  `json:"dry_run" yaml:"dry_run"`
}
