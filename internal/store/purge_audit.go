package store

import (
	"context"
	"time"
)

// auditPurgeBatch is how many audit entries one commit deletes.
const auditPurgeBatch = 1000

// PurgeAudit deletes the audit entries older than cutoff, a batch per
// commit, and returns how many it deleted (engine.retention.audit, §6).
func PurgeAudit(ctx context.Context, st Store, cutoff time.Time) (int, error) {
	total := 0
	for {
		var n int
		err := st.Update(ctx, func(w Writer) error {
			var err error
			n, err = w.DeleteAuditBefore(cutoff, auditPurgeBatch)
			return err
		})
		total += n
		if err != nil || n < auditPurgeBatch {
			return total, err
		}
	}
}
