package engine

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// purgeBatch is how many messages one purge commit deletes.
const purgeBatch = 1000

// retentionLoop purges DLVD and FAIL messages past their retention (§8)
// until ctx ends, checking every tenth of the shorter retention (at most
// every minute).
func (e *Engine) retentionLoop(ctx context.Context) {
	ret := e.cfg.Engine.Retention
	every := min(ret.Delivered, ret.Failed) / 10
	if every <= 0 || every > time.Minute {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := e.now()
			for _, p := range []struct {
				status domain.Status
				keep   time.Duration
			}{{domain.StatusDLVD, ret.Delivered}, {domain.StatusFAIL, ret.Failed}} {
				if p.keep <= 0 {
					continue
				}
				n, err := Purge(ctx, e.st, p.status, now.Add(-p.keep), false)
				if err != nil {
					e.log.Error("purge failed", "status", p.status, "err", err)
				} else if n > 0 {
					e.log.Info("purged", "status", p.status, "messages", n)
				}
			}
		}
	}
}

// Purge deletes messages in a final status (DLVD or FAIL) last changed
// before cutoff, in batches, and returns how many it deleted (or, with
// dryRun, would delete). Other statuses are never purged.
func Purge(ctx context.Context, st store.Store, status domain.Status, cutoff time.Time, dryRun bool) (int, error) {
	if !status.Final() {
		return 0, domain.Invalidf("status %s is not final; only DLVD and FAIL messages are purged", status)
	}
	total := 0
	after := ""
	for {
		var ids []string
		last := ""
		err := st.View(ctx, func(r store.Reader) error {
			// created_at <= updated_at, so messages created after the cutoff
			// cannot qualify: the walk in id (creation) order stops there.
			f := store.MessageFilter{Statuses: []domain.Status{status}, After: after}
			return r.Messages(f, func(m *domain.Message) error {
				if m.CreatedAt.After(cutoff) || len(ids) == purgeBatch {
					return store.ErrStop
				}
				last = m.ID
				if m.UpdatedAt.Before(cutoff) {
					ids = append(ids, m.ID)
				}
				return nil
			})
		})
		if err != nil {
			return total, err
		}
		if len(ids) == 0 && last == "" {
			return total, nil
		}
		if !dryRun && len(ids) > 0 {
			err = st.Update(ctx, func(w store.Writer) error {
				for _, id := range ids {
					m, err := w.Message(id)
					if err != nil || m.Status != status {
						continue // gone or changed since it was read
					}
					if err := w.Delete(id); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return total, err
			}
		}
		total += len(ids)
		after = last
	}
}
