package postgres

import (
	"fmt"
	"time"
)

// DeleteAuditBefore deletes up to max audit entries older than cutoff, from
// the oldest, stopping at the first entry that is not: every entry before
// the first one at or after the cutoff is older.
func (t *txn) DeleteAuditBefore(cutoff time.Time, max int) (int, error) {
	tag, err := t.tx.Exec(t.ctx, `DELETE FROM audit WHERE seq IN (
		SELECT seq FROM audit
		WHERE seq < coalesce((SELECT min(seq) FROM audit WHERE at >= $1), 9223372036854775807)
		ORDER BY seq LIMIT $2)`, cutoff, max)
	if err != nil {
		return 0, fmt.Errorf("audit: delete entries before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return int(tag.RowsAffected()), nil
}
