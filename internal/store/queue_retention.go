package store

import (
	"context"
	"errors"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// queueRetentionBatch is how many queues one commit deletes.
const queueRetentionBatch = 500

// Uncreated reports whether retention removes the queue q: it is empty
// and not stopped, and the tuning values in force would not place a new
// message in it (placement.Creates) — a queue of a parallelism since
// lowered or unset. A stopped queue is the operator's to delete.
func Uncreated(params placement.ParamReader, q *QueueRecord) (bool, error) {
	if q.Holds() || q.Stopped {
		return false, nil
	}
	creates, err := placement.Creates(params, q.Name, q.Receiver)
	return !creates, err
}

// DeleteUncreatedQueues deletes the queues that Uncreated says retention
// removes, in batches, each checked again in the transaction that deletes
// it, and returns their names (with dryRun, those it would delete).
// onBatch, if set, runs in each batch's transaction with the names
// deleted (the audit entry).
func DeleteUncreatedQueues(ctx context.Context, st Store, dryRun bool, onBatch func(w Writer, names []string) error) ([]string, error) {
	var found []string
	err := st.View(ctx, func(r Reader) error {
		return r.Queues("", func(q *QueueRecord) error {
			gone, err := Uncreated(r, q)
			if gone {
				found = append(found, q.Name)
			}
			return err
		})
	})
	if err != nil || dryRun {
		return found, err
	}
	var out []string
	for len(found) > 0 {
		batch := found[:min(queueRetentionBatch, len(found))]
		found = found[len(batch):]
		var deleted []string
		err := st.Update(ctx, func(w Writer) error {
			deleted = nil // fn may run again for a grouped commit
			if err := LockQueues(w, batch, nil); err != nil {
				return err
			}
			for _, name := range batch {
				q, err := w.Queue(name)
				if errors.Is(err, domain.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if gone, err := Uncreated(w, q); err != nil {
					return err
				} else if !gone {
					continue // a message or a tuning value came since
				}
				if err := w.DeleteQueue(name); errors.Is(err, ErrQueueHolds) {
					continue
				} else if err != nil {
					return err
				}
				deleted = append(deleted, name)
			}
			if onBatch != nil && len(deleted) > 0 {
				return onBatch(w, deleted)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, deleted...)
	}
	return out, nil
}
