package local

import (
	"context"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// appendAudit is the one way the service writes the audit log: every entry
// bounded (§6), so that no request, refused or not, can grow the store by
// more than an entry's bounds.
func appendAudit(w store.Writer, e *domain.AuditEntry) error {
	e.Bound()
	return w.AppendAudit(e)
}

// RecordRefusal writes the audit entry of a request that a front end
// refused before it reached the service, for the caller.
func (s *Service) RecordRefusal(ctx context.Context, r admin.Refusal) error {
	if err := r.Check(); err != nil {
		return err
	}
	s = s.as(ctx)
	return s.RecordAudit(ctx, &domain.AuditEntry{
		At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: r.Action,
		Targets: r.Targets, Result: domain.AuditError, Detail: r.Reason,
	})
}
