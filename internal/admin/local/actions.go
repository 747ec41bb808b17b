package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// actBatch is how many targets one commit changes.
const actBatch = 1000

// errDryRun rolls back a dry run's transaction after it worked out the result.
var errDryRun = errors.New("dry run")

// messageAction is how one operator action changes a message.
type messageAction struct {
	from []domain.Status
	to   domain.Status
	// blacklisted, when set, limits the action to blacklisted messages.
	blacklisted bool
	// update changes fields besides the status.
	update func(m *domain.Message, p admin.ActParams, actor string)
	// end, if set, applies the action instead of a transition: a
	// transactional send's commit or rollback, by the rules the engine's
	// check-back follows too.
	end func(w store.Writer, placer placement.Placer, id string, h domain.HistoryEntry) (*domain.Message, error)
	// verb is the `message` command that does the same for messages that
	// are not blacklisted; a skip reason points to it.
	verb string
}

var messageActions = map[admin.Action]messageAction{
	admin.ActResend: {
		from: []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, to: domain.StatusTBDL, verb: "resend",
		update: func(m *domain.Message, _ admin.ActParams, _ string) {
			// A fresh start: all retries again; a blacklisted message is released.
			m.Attempts, m.NextAttemptAt, m.Node = 0, nil, ""
			if m.Blacklisted {
				release(m)
			}
		},
	},
	admin.ActFail: {
		from: []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}, to: domain.StatusFAIL, verb: "fail",
		update: failUpdate,
	},
	admin.ActRelease: {
		from: []domain.Status{domain.StatusNDLV}, to: domain.StatusTBDL, blacklisted: true, verb: "resend",
		update: func(m *domain.Message, _ admin.ActParams, _ string) {
			m.Attempts, m.NextAttemptAt, m.Node = 0, nil, ""
			release(m)
		},
	},
	admin.ActBlacklistFail: {
		from: []domain.Status{domain.StatusNDLV}, to: domain.StatusFAIL, blacklisted: true, verb: "fail",
		update: failUpdate,
	},
	admin.ActCommit: {
		from: []domain.Status{domain.StatusPEND}, to: domain.StatusTBDL, verb: "commit",
		end: func(w store.Writer, placer placement.Placer, id string, h domain.HistoryEntry) (*domain.Message, error) {
			return store.CommitPrepared(w, placer, id, h, nil)
		},
	},
	admin.ActRollback: {
		from: []domain.Status{domain.StatusPEND}, verb: "roll back",
		end: func(w store.Writer, _ placement.Placer, id string, _ domain.HistoryEntry) (*domain.Message, error) {
			return store.RollbackPrepared(w, id)
		},
	},
}

// release takes a message off the blacklist: its crashes reset, and the
// blacklisting is no longer its current error (its history keeps it).
func release(m *domain.Message) {
	m.Crashes, m.Blacklisted = 0, false
	m.Error, m.ErrorClass = "", ""
}

func failUpdate(m *domain.Message, p admin.ActParams, actor string) {
	m.NextAttemptAt, m.Node, m.ErrorClass = nil, "", domain.ErrorAdmin
	m.Error = "failed by " + actor
	if p.Reason != "" {
		m.Error += ": " + p.Reason
	}
}

// Act applies an action to its targets — the ids or queue names given, or
// those a selection names — each on its own compare-and-set, in batches of
// actBatch per commit, each batch with its audit entry. The HOLD rule is
// restored once for the whole action, in the commit of its last batch:
// failing a blocked head together with the messages held behind it fails
// them all, in whatever order and however many batches they come in.
func (s *Service) Act(ctx context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	s = s.as(ctx)
	next, err := s.targetsOf(ctx, p)
	if err != nil {
		return nil, s.refused(ctx, string(p.Action), p.Targets, domain.AuditError, err)
	}
	res := admin.NewBulkResult()
	res.DryRun = p.DryRun
	var touched []string // the queues the action changed so far, in order
	seen := map[string]bool{}
	for {
		batch, last, err := next()
		if err != nil {
			return res, err
		}
		if len(batch) == 0 && (len(touched) == 0 || p.DryRun) {
			return res, nil
		}
		var br *admin.BulkResult
		var changed []string
		err = s.st.Update(ctx, func(w store.Writer) error {
			br, changed = admin.NewBulkResult(), nil
			// The queues of the batch, and those whose HOLD rule the
			// last batch restores, locked ahead in one order.
			var names, ids []string
			if p.Action.QueueAction() {
				names = batch
			} else {
				ids = batch
			}
			if last {
				names = append(slices.Clone(names), touched...)
			}
			if err := store.LockQueues(w, names, ids); err != nil {
				return err
			}
			order := batch
			if p.Action == admin.ActDeleteQueue {
				// A delete locks each row as it goes: in name order, the
				// order every writer locks queue rows in.
				order = slices.Sorted(slices.Values(batch))
			}
			for _, t := range order {
				q, err := s.actOne(w, p, t, br)
				if err != nil {
					return err
				}
				if q != "" && !seen[q] && !slices.Contains(changed, q) {
					changed = append(changed, q)
				}
			}
			if p.DryRun {
				return errDryRun
			}
			if last {
				if err := s.restoreHold(w, p, append(slices.Clone(touched), changed...)); err != nil {
					return err
				}
			}
			if len(batch) == 0 {
				return nil
			}
			return appendAudit(w, s.auditEntry(p, batch, br))
		})
		if err != nil && !errors.Is(err, errDryRun) {
			return res, err
		}
		if p.CountOnly {
			br.ChangedIDs = nil
		}
		res.Add(br)
		for _, q := range changed {
			seen[q] = true
		}
		touched = append(touched, changed...)
		if last {
			return res, nil
		}
	}
}

// targetsOf returns the action's targets a batch at a time; last is set
// with the final batch (which may be empty). Explicit targets are checked
// whole first — a malformed id refuses the action before anything changed —
// and repeated ones dropped; a selection is walked a batch at a time, each
// read in a transaction of its own, up to its Last target.
func (s *Service) targetsOf(ctx context.Context, p admin.ActParams) (func() (batch []string, last bool, err error), error) {
	_, isMessage := messageActions[p.Action]
	if !isMessage && !p.Action.QueueAction() {
		return nil, domain.Invalidf("unknown action %q", p.Action)
	}
	if err := domain.ValidateReason(p.Reason); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	if p.Select != nil {
		if len(p.Targets) > 0 {
			return nil, domain.Invalidf("give targets or a selection, not both; nothing was changed")
		}
		return s.selection(ctx, p)
	}
	if len(p.Targets) == 0 {
		return nil, domain.Invalidf("%s names no targets; nothing was changed", p.Action)
	}
	out := make([]string, 0, len(p.Targets))
	seen := make(map[string]bool, len(p.Targets))
	for _, t := range p.Targets {
		if isMessage {
			id, err := messageID(t)
			if err != nil {
				return nil, fmt.Errorf("%w; nothing was changed", err)
			}
			t = id
		} else if t == "" || len(t) > domain.MaxQueueName {
			return nil, domain.Invalidf("queue name %q must be 1-%d characters; nothing was changed", t, domain.MaxQueueName)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return func() ([]string, bool, error) {
		batch := out[:min(actBatch, len(out))]
		out = out[len(batch):]
		return batch, len(out) == 0, nil
	}, nil
}

// actOne applies the action to one target and returns the queue it touched.
func (s *Service) actOne(w store.Writer, p admin.ActParams, target string, br *admin.BulkResult) (string, error) {
	if p.Action.QueueAction() {
		return s.actQueue(w, p, target, br)
	}
	a := messageActions[p.Action]
	m, err := w.Message(target)
	if errors.Is(err, domain.ErrNotFound) {
		br.NotFound = append(br.NotFound, target)
		return "", nil
	}
	if err != nil {
		return "", err
	}
	needs := domain.Alternatives(a.from)
	if a.blacklisted {
		needs = "a blacklisted " + needs + " message"
	}
	if !slices.Contains(a.from, m.Status) {
		br.Skipped = append(br.Skipped, admin.Skipped{ID: m.ID, Status: m.Status,
			Reason: fmt.Sprintf("status is %s; %s needs %s", m.Status, p.Action, needs)})
		return "", nil
	}
	if a.blacklisted && !m.Blacklisted {
		br.Skipped = append(br.Skipped, admin.Skipped{ID: m.ID, Status: m.Status,
			Reason: fmt.Sprintf("status is %s but not blacklisted; %s needs %s (use 'message %s')", m.Status, p.Action, needs, a.verb)})
		return "", nil
	}
	if p.Action == admin.ActResend && m.Blacklisted && !p.IncludeBlacklisted {
		br.Skipped = append(br.Skipped, admin.Skipped{ID: m.ID, Status: m.Status,
			Reason: fmt.Sprintf("blacklisted after %d crashes; %s leaves it alone: release it with 'blacklist release', or resend with --include-blacklisted",
				m.Crashes, p.Action)})
		return "", nil
	}
	now := s.opts.Now()
	reason := fmt.Sprintf("%s by %s", p.Action, s.opts.Actor)
	if p.Reason != "" {
		reason += ": " + p.Reason
	}
	h := domain.HistoryEntry{At: now, Actor: s.opts.Actor, Reason: reason}
	if a.end != nil {
		after, err := a.end(w, s.placer, m.ID, h)
		if err != nil {
			return "", err
		}
		m.Queue = after.Queue // a commit places an EOIO message anew (§10)
	} else {
		_, err = w.Transition(store.TransitionParams{
			ID: m.ID, From: []domain.Status{m.Status}, To: a.to, History: h,
			Update: func(nm *domain.Message) {
				if a.update != nil {
					a.update(nm, p, s.opts.Actor)
				}
			},
		})
		if err != nil {
			return "", err
		}
	}
	br.Changed++
	br.ChangedIDs = append(br.ChangedIDs, m.ID)
	if m.Blacklisted && p.Action == admin.ActResend {
		br.BlacklistedChanged++
	}
	return m.Queue, nil
}

// restoreHold restores the HOLD rule in the queues a batch of message actions
// changed. It runs once after every target of the batch was applied, not
// after each: failing a blocked head together with the messages held behind
// it must fail them all, not release them for delivery half way.
func (s *Service) restoreHold(w store.Writer, p admin.ActParams, queues []string) error {
	if p.Action.QueueAction() {
		return nil
	}
	h := domain.HistoryEntry{At: s.opts.Now(), Actor: s.opts.Actor}
	for _, q := range queues {
		if err := store.RestoreHold(w, q, h); err != nil {
			return err
		}
	}
	return nil
}

// actQueue stops, starts or deletes one queue.
func (s *Service) actQueue(w store.Writer, p admin.ActParams, name string, br *admin.BulkResult) (string, error) {
	rec, err := w.Queue(name)
	if errors.Is(err, domain.ErrNotFound) {
		br.NotFound = append(br.NotFound, name)
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if p.Action == admin.ActDeleteQueue {
		err := w.DeleteQueue(name)
		if errors.Is(err, store.ErrQueueHolds) {
			br.Skipped = append(br.Skipped, admin.Skipped{ID: name, Reason: holdsReason(rec)})
			return "", nil
		}
		if err != nil {
			return "", err
		}
		br.Changed++
		br.ChangedIDs = append(br.ChangedIDs, name)
		return "", nil
	}
	stop := p.Action == admin.ActStop
	if rec.Stopped == stop {
		state := "running"
		if stop {
			state = "STOPPED"
		}
		br.Skipped = append(br.Skipped, admin.Skipped{ID: name, Reason: "the queue is already " + state})
		return "", nil
	}
	if err := w.SetStopped(name, stop); err != nil {
		return "", err
	}
	br.Changed++
	br.ChangedIDs = append(br.ChangedIDs, name)
	return name, nil
}

// auditEntry records one batch: ok when every target changed, conflict
// otherwise, with the counts and the reasons in the detail.
func (s *Service) auditEntry(p admin.ActParams, targets []string, br *admin.BulkResult) *domain.AuditEntry {
	result := domain.AuditOK
	var detail []string
	if len(br.Skipped)+len(br.NotFound) > 0 {
		result = domain.AuditConflict
		detail = append(detail, fmt.Sprintf("changed %d, skipped %d, not found %d", br.Changed, len(br.Skipped), len(br.NotFound)))
		for _, sk := range br.Skipped[:min(len(br.Skipped), 5)] {
			detail = append(detail, sk.ID+": "+sk.Reason)
		}
	}
	if p.Reason != "" {
		detail = append(detail, "reason: "+p.Reason)
	}
	return &domain.AuditEntry{
		At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: string(p.Action),
		Targets: targets, Result: result, Detail: strings.Join(detail, "; "),
	}
}

// holdsReason says why a queue that holds messages is not deleted: how
// many, of which statuses, and what empties it.
func holdsReason(q *store.QueueRecord) string {
	n, parts := int64(0), []string{}
	for _, st := range domain.Statuses {
		if c := q.Counts[st]; c > 0 {
			n += c
			parts = append(parts, fmt.Sprintf("%d %s", c, st))
		}
	}
	word := "messages"
	if n == 1 {
		word = "message"
	}
	return fmt.Sprintf("the queue holds %d %s (%s); only an empty queue is deleted: its open messages must end DLVD or FAIL, and purge removes those",
		n, word, strings.Join(parts, ", "))
}
