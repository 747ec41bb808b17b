package local

import (
	"context"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Purge deletes DLVD and FAIL messages last changed before their cutoffs,
// with an audit entry per batch; NDLV, WAIT, HOLD, TBDL, DLNG and PEND are
// never purged.
func (s *Service) Purge(ctx context.Context, p admin.PurgeParams) (*admin.PurgeResult, error) {
	s = s.as(ctx)
	res := &admin.PurgeResult{Counts: map[domain.Status]int{}, DryRun: p.DryRun}
	for _, c := range []struct {
		status domain.Status
		cutoff time.Time
	}{{domain.StatusDLVD, p.DeliveredBefore}, {domain.StatusFAIL, p.FailedBefore}} {
		cutoff := c.cutoff
		if cutoff.IsZero() {
			continue
		}
		n, err := store.Purge(ctx, s.st, c.status, cutoff, p.DryRun, func(w store.Writer, ids []string) error {
			return appendAudit(w, &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
				Action: "purge", Targets: ids, Result: domain.AuditOK,
				Detail: fmt.Sprintf("%d %s messages last changed before %s", len(ids), c.status, cutoff.Format(time.RFC3339))})
		})
		res.Counts[c.status] = n
		if err != nil {
			return res, err
		}
	}
	// Then the queues that purge left empty and no tuning value creates
	// again.
	queues, err := store.DeleteUncreatedQueues(ctx, s.st, p.DryRun, func(w store.Writer, names []string) error {
		return appendAudit(w, &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
			Action: "purge", Targets: names, Result: domain.AuditOK,
			Detail: fmt.Sprintf("%d empty queues that no tuning value in force creates", len(names))})
	})
	res.Queues = len(queues)
	return res, err
}
