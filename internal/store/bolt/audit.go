package bolt

import (
	"encoding/binary"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// AppendAudit appends e to the audit log, setting its Seq (and At when zero).
func (t *txn) AppendAudit(e *domain.AuditEntry) error {
	b := t.bucket(bucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return fmt.Errorf("audit: next sequence: %w", err)
	}
	if e.At.IsZero() {
		e.At = now()
	}
	e.Seq = seq
	v, err := encodeAudit(e)
	if err != nil {
		return fmt.Errorf("audit entry %d: encode: %w", seq, err)
	}
	if err := b.Put(seqBytes(seq), v); err != nil {
		return fmt.Errorf("audit entry %d: store: %w", seq, err)
	}
	return nil
}

// Audit calls fn for the audit entries matching f, oldest first. Since is
// inclusive: an entry at exactly f.Since is returned.
func (t *txn) Audit(f store.AuditFilter, fn func(*domain.AuditEntry) error) error {
	lim := limiter{limit: f.Limit}
	err := t.walk(t.bucket(bucketAudit), nil, seqBytes(f.AfterSeq), true, func(k, v []byte) error {
		e, err := decodeAudit(binary.BigEndian.Uint64(k), v)
		if err != nil {
			return err
		}
		if (!f.Since.IsZero() && e.At.Before(f.Since)) || (f.Actor != "" && e.Actor != f.Actor) {
			return nil
		}
		if err := fn(e); err != nil {
			return err
		}
		if lim.done() {
			return store.ErrStop
		}
		return nil
	})
	return stopped(err)
}
