package store

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// purgeBatch is how many messages one purge commit deletes.
const purgeBatch = 1000

// Purge deletes messages in a final status (DLVD or FAIL) last changed
// before cutoff, in batches, and returns how many it deleted (or, with
// dryRun, would delete). Other statuses are never purged. onBatch, if set,
// runs in each batch's transaction with the ids deleted (the audit entry).
func Purge(ctx context.Context, st Store, status domain.Status, cutoff time.Time, dryRun bool, onBatch func(w Writer, ids []string) error) (int, error) {
	if !status.Final() {
		return 0, domain.Invalidf("status %s is not final; only DLVD and FAIL messages are purged", status)
	}
	total := 0
	after := ""
	for {
		var ids []string
		last := ""
		err := st.View(ctx, func(r Reader) error {
			// created_at <= updated_at, so messages created after the cutoff
			// cannot qualify: the walk in id (creation) order stops there.
			f := MessageFilter{Statuses: []domain.Status{status}, After: after}
			return r.Messages(f, func(m *domain.Message) error {
				if m.CreatedAt.After(cutoff) || len(ids) == purgeBatch {
					return ErrStop
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
		n := len(ids) // a dry run would delete them all
		if !dryRun && len(ids) > 0 {
			err = st.Update(ctx, func(w Writer) error {
				deleted := make([]string, 0, len(ids))
				for _, id := range ids {
					m, err := w.Message(id)
					if err != nil || m.Status != status {
						continue // gone or changed since it was read
					}
					if err := w.Delete(id); err != nil {
						return err
					}
					deleted = append(deleted, id)
				}
				// Set, not added: fn may run again for a grouped commit.
				n = len(deleted)
				if onBatch != nil {
					return onBatch(w, deleted)
				}
				return nil
			})
			if err != nil {
				return total, err
			}
		}
		total += n
		after = last
	}
}
