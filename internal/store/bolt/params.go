package bolt

import (
	"encoding/binary"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
)

// Param returns one tuning value; ok is false when it is not set.
func (t *txn) Param(name, sub string) (int, bool, error) {
	v := t.bucket(bucketParams).Get(paramKey(name, sub))
	if v == nil {
		return 0, false, nil
	}
	if len(v) != 8 {
		return 0, false, fmt.Errorf("parameter %s %s: stored value is %d bytes, not 8", name, sub, len(v))
	}
	return int(int64(binary.BigEndian.Uint64(v))), true, nil
}

// Params calls fn for each tuning value set, ordered by name and sub.
func (t *txn) Params(fn func(domain.Param) error) error {
	err := t.walk(t.bucket(bucketParams), nil, nil, false, func(k, v []byte) error {
		name, sub := splitParamKey(k)
		if len(v) != 8 {
			return fmt.Errorf("parameter %s %s: stored value is %d bytes, not 8", name, sub, len(v))
		}
		return fn(domain.Param{Name: name, Sub: sub, Value: int(int64(binary.BigEndian.Uint64(v)))})
	})
	return stopped(err)
}

// SetParam stores a tuning value.
func (t *txn) SetParam(p domain.Param) error {
	if err := validName("parameter", p.Name); err != nil {
		return err
	}
	if err := t.bucket(bucketParams).Put(paramKey(p.Name, p.Sub), seqBytes(uint64(int64(p.Value)))); err != nil {
		return fmt.Errorf("parameter %s %s: store: %w", p.Name, p.Sub, err)
	}
	return nil
}

// UnsetParam removes a tuning value; one that is not set is fine.
func (t *txn) UnsetParam(name, sub string) error {
	if err := t.bucket(bucketParams).Delete(paramKey(name, sub)); err != nil {
		return fmt.Errorf("parameter %s %s: delete: %w", name, sub, err)
	}
	return nil
}
