package local

import (
	"context"
	"fmt"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Audit lists audit entries.
func (s *Service) Audit(ctx context.Context, f admin.AuditFilter, fn func(*domain.AuditEntry) error) error {
	return s.view(ctx, func(r store.Reader) error {
		return r.Audit(store.AuditFilter{Since: f.Since, Actor: f.Actor, AfterSeq: f.AfterSeq, Limit: f.Limit}, fn)
	})
}

// RecordAudit appends an audit entry in a transaction of its own: a request
// refused before it reached the service (§6: refusals are audited too).
func (s *Service) RecordAudit(ctx context.Context, e *domain.AuditEntry) error {
	return s.st.Update(ctx, func(w store.Writer) error { return w.AppendAudit(e) })
}

// refused records a request the service refused before it changed
// anything, and returns the refusal: with a note when even the audit entry
// could not be written, so that the operator learns the log lacks it.
func (s *Service) refused(ctx context.Context, action string, targets []string, result string, cause error) error {
	if err := s.audit(ctx, action, targets, result, cause.Error()); err != nil {
		return fmt.Errorf("%w (recording this refusal in the audit log failed: %v)", cause, err)
	}
	return cause
}

// audit writes one audit entry in a transaction of its own (for requests
// that changed nothing, so there is no other transaction to share).
func (s *Service) audit(ctx context.Context, action string, targets []string, result, detail string) error {
	if len(targets) > actBatch {
		targets = targets[:actBatch]
	}
	// A refusal is recorded even when the request's own context ended.
	return s.st.Update(context.WithoutCancel(ctx), func(w store.Writer) error {
		return w.AppendAudit(&domain.AuditEntry{
			At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: action,
			Targets: targets, Result: result, Detail: detail,
		})
	})
}
