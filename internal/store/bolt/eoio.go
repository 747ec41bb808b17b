package bolt

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// keyEOIO holds the state of the EOIO switch procedure (§10) in the meta
// bucket, as JSON: it is written once per switch.
const keyEOIO = "eoio"

// EOIO returns the switch state; a transaction reads it once, since every
// EOIO placement and claim asks for it.
func (t *txn) EOIO() (domain.EOIOSwitch, error) {
	if t.eoio != nil {
		return *t.eoio, nil
	}
	s := domain.DefaultEOIO
	if v := t.bucket(bucketMeta).Get([]byte(keyEOIO)); v != nil {
		doc, ok := sealedJSON([]byte(keyEOIO), v, t.legacy)
		if !ok {
			return s, corrupt("the EOIO switch state does not match its checksum")
		}
		if err := json.Unmarshal(doc, &s); err != nil {
			return s, fmt.Errorf("the EOIO switch state is unreadable: %w", err)
		}
	}
	t.eoio = &s
	return s, nil
}

// SetEOIO stores the switch state.
func (t *txn) SetEOIO(s domain.EOIOSwitch) error {
	s.At = s.At.UTC().Truncate(time.Microsecond)
	v, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := t.bucket(bucketMeta).Put([]byte(keyEOIO), sealJSON([]byte(keyEOIO), v)); err != nil {
		return fmt.Errorf("store the EOIO switch state: %w", err)
	}
	t.eoio = &s
	return nil
}
