package bolt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

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
		e.At = t.now()
	}
	e.Seq = seq
	v, err := encodeAudit(seqBytes(seq), e)
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
		e, err := decodeAudit(k, v, t.legacy)
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

// storedAudit is one audit entry as stored, in JSON (audit entries are
// written rarely); its seq is the key.
type storedAudit struct {
	Seq     uint64    `json:"-"`
	At      time.Time `json:"at"`
	Actor   string    `json:"actor"`
	Source  string    `json:"source,omitempty"`
	Action  string    `json:"action"`
	Targets []string  `json:"targets,omitempty"`
	Result  string    `json:"result"`
	Detail  string    `json:"detail,omitempty"`
}

// encodeAudit encodes an audit entry, sealed under its key.
func encodeAudit(key []byte, e *domain.AuditEntry) ([]byte, error) {
	doc, err := json.Marshal(storedAudit(*e))
	if err != nil {
		return nil, err
	}
	return sealJSON(key, doc), nil
}

// decodeAudit decodes the audit entry stored under key (its seq), checking
// its seal; legacy accepts the unsealed JSON of layout version 2.
func decodeAudit(key, v []byte, legacy bool) (*domain.AuditEntry, error) {
	if len(key) != 8 {
		return nil, corrupt("the audit bucket holds a key of %d bytes, %x, not a seq", len(key), key)
	}
	seq := binary.BigEndian.Uint64(key)
	doc, ok := sealedJSON(key, v, legacy)
	if !ok {
		return nil, corrupt("audit entry %d does not match its checksum", seq)
	}
	var s storedAudit
	if err := json.Unmarshal(doc, &s); err != nil {
		return nil, corrupt("decode audit entry %d: %v", seq, err)
	}
	s.Seq = seq
	e := domain.AuditEntry(s)
	return &e, nil
}
