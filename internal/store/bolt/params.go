package bolt

import (
	"encoding/binary"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
)

// Param returns one tuning value; ok is false when it is not set.
func (t *txn) Param(name, sub string) (int, bool, error) {
	k := paramKey(name, sub)
	v := t.bucket(bucketParams).Get(k)
	if v == nil {
		return 0, false, nil
	}
	n, err := paramValue(k, v, t.legacy)
	return n, err == nil, err
}

// paramValue decodes the value stored under a parameter's key, checking
// its seal; legacy accepts the unsealed value of layout version 2.
func paramValue(k, v []byte, legacy bool) (int, error) {
	body, ok := sealedFixed(k, v, 8, legacy)
	if !ok {
		name, sub := splitParamKey(k)
		return 0, corrupt("parameter %s %s: its stored value does not match its checksum", name, sub)
	}
	return int(int64(binary.BigEndian.Uint64(body))), nil
}

// Params calls fn for each tuning value set, ordered by name and sub.
func (t *txn) Params(fn func(domain.Param) error) error {
	err := t.walk(t.bucket(bucketParams), nil, nil, false, func(k, v []byte) error {
		name, sub := splitParamKey(k)
		n, err := paramValue(k, v, t.legacy)
		if err != nil {
			return err
		}
		return fn(domain.Param{Name: name, Sub: sub, Value: n})
	})
	return stopped(err)
}

// SetParam stores a tuning value.
func (t *txn) SetParam(p domain.Param) error {
	if err := validName("parameter", p.Name); err != nil {
		return err
	}
	k := paramKey(p.Name, p.Sub)
	if err := t.bucket(bucketParams).Put(k, seal(k, seqBytes(uint64(int64(p.Value))))); err != nil {
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
