package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
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
	// remove deletes the message instead (transactional rollback).
	remove bool
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
			m.Crashes, m.Blacklisted = 0, false
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
			m.Crashes, m.Blacklisted = 0, false
		},
	},
	admin.ActBlacklistFail: {
		from: []domain.Status{domain.StatusNDLV}, to: domain.StatusFAIL, blacklisted: true, verb: "fail",
		update: failUpdate,
	},
	admin.ActCommit: {
		from: []domain.Status{domain.StatusPEND}, to: domain.StatusTBDL, verb: "commit",
	},
	admin.ActRollback: {
		from: []domain.Status{domain.StatusPEND}, remove: true, verb: "roll back",
	},
}

func failUpdate(m *domain.Message, p admin.ActParams, actor string) {
	m.NextAttemptAt, m.Node, m.ErrorClass = nil, "", domain.ErrorAdmin
	m.Error = "failed by " + actor
	if p.Reason != "" {
		m.Error += ": " + p.Reason
	}
}

// Act applies an action to its targets, each on its own compare-and-set,
// in batches of actBatch per commit, each batch with its audit entry.
func (s *Service) Act(ctx context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	s = s.as(ctx)
	targets, err := s.checkTargets(p)
	if err != nil {
		s.auditRefusal(ctx, p, err)
		return nil, err
	}
	res := admin.NewBulkResult()
	res.DryRun = p.DryRun
	for start := 0; start < len(targets); start += actBatch {
		batch := targets[start:min(start+actBatch, len(targets))]
		var br *admin.BulkResult
		var touched []string
		err := s.st.Update(ctx, func(w store.Writer) error {
			br, touched = admin.NewBulkResult(), nil
			for _, t := range batch {
				q, err := s.actOne(w, p, t, br)
				if err != nil {
					return err
				}
				if q != "" && !slices.Contains(touched, q) {
					touched = append(touched, q)
				}
			}
			if err := s.settle(w, p, touched); err != nil {
				return err
			}
			if p.DryRun {
				return errDryRun
			}
			return appendAudit(w, s.auditEntry(p, batch, br))
		})
		if err != nil && !errors.Is(err, errDryRun) {
			return res, err
		}
		res.Add(br)
	}
	return res, nil
}

// checkTargets refuses malformed ids before anything is applied, and drops
// repeated targets.
func (s *Service) checkTargets(p admin.ActParams) ([]string, error) {
	_, isMessage := messageActions[p.Action]
	if !isMessage && !p.Action.QueueAction() {
		return nil, domain.Invalidf("unknown action %q", p.Action)
	}
	if len(p.Targets) == 0 {
		return nil, domain.Invalidf("%s names no targets; nothing was changed", p.Action)
	}
	if err := domain.ValidateReason(p.Reason); err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
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
	return out, nil
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
	needs := joinStatuses(a.from)
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
	now := s.opts.Now()
	reason := fmt.Sprintf("%s by %s", p.Action, s.opts.Actor)
	if p.Reason != "" {
		reason += ": " + p.Reason
	}
	h := domain.HistoryEntry{At: now, Actor: s.opts.Actor, Reason: reason}
	if a.remove {
		if err := w.Delete(m.ID); err != nil {
			return "", err
		}
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
	return m.Queue, nil
}

// settle restores the HOLD rule in the queues a batch of message actions
// changed. It runs once after every target of the batch was applied, not
// after each: failing a blocked head together with the messages held behind
// it must fail them all, not release them for delivery half way.
func (s *Service) settle(w store.Writer, p admin.ActParams, queues []string) error {
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

// actQueue stops or starts one queue.
func (s *Service) actQueue(w store.Writer, p admin.ActParams, name string, br *admin.BulkResult) (string, error) {
	rec, err := w.Queue(name)
	if errors.Is(err, domain.ErrNotFound) {
		br.NotFound = append(br.NotFound, name)
		return "", nil
	}
	if err != nil {
		return "", err
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

// auditRefusal records an action refused before it ran.
func (s *Service) auditRefusal(ctx context.Context, p admin.ActParams, cause error) {
	s.audit(ctx, string(p.Action), p.Targets, domain.AuditError, cause.Error())
}

// audit writes one audit entry in a transaction of its own (for actions
// that changed nothing, so there is no other transaction to share).
func (s *Service) audit(ctx context.Context, action string, targets []string, result, detail string) {
	if len(targets) > actBatch {
		targets = targets[:actBatch]
	}
	_ = s.st.Update(ctx, func(w store.Writer) error {
		return appendAudit(w, &domain.AuditEntry{
			At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: action,
			Targets: targets, Result: result, Detail: detail,
		})
	})
}

func joinStatuses(ss []domain.Status) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
