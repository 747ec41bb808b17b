package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// DeleteAuditBefore deletes up to max audit entries older than cutoff, from
// the oldest, stopping at the first entry that is not.
func (t *txn) DeleteAuditBefore(cutoff time.Time, max int) (int, error) {
	b := t.bucket(bucketAudit)
	var old [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < max; k, v = c.Next() {
		e, err := decodeAudit(k, v, t.legacy)
		if err != nil {
			return 0, err
		}
		if !e.At.Before(cutoff) {
			break
		}
		old = append(old, bytes.Clone(k))
	}
	// Deleted after the walk: a bbolt cursor is not valid across a change.
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, fmt.Errorf("audit entry %d: delete: %w", binary.BigEndian.Uint64(k), err)
		}
	}
	return len(old), nil
}
