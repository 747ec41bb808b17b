package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// The record of the crashes recoveries counted (store.CountedCrash), so
// that a dead incarnation whose process comes back takes them back. Each
// value is sealed under its key (seal.go): a flipped bit would otherwise
// take back another crash, or the wrong one.

// crashKey is the key of bucketCrashes for message id's crash counted
// against incarnation inc.
func crashKey(inc uint64, id string) []byte {
	key := idOf(id)
	return append(binary.BigEndian.AppendUint64(nil, inc), key[:]...)
}

// keepCrashes records the crashes a recovery counted against incarnation dead.
func (t *txn) keepCrashes(dead store.Node, crashes []store.CountedCrash) error {
	b := t.bucket(bucketCrashes)
	for _, c := range crashes {
		key := crashKey(dead.Incarnation, c.ID)
		v := binary.AppendUvarint(nil, uint64(c.Crash))
		v = binary.AppendVarint(v, c.At.UnixMicro())
		if err := b.Put(key, seal(key, v)); err != nil {
			return fmt.Errorf("record the crashes of node %s: %w", dead.ID, err)
		}
	}
	return nil
}

// takeCrashes removes and returns the crashes counted against incarnation inc.
func (t *txn) takeCrashes(inc uint64) ([]store.CountedCrash, error) {
	b := t.bucket(bucketCrashes)
	prefix := binary.BigEndian.AppendUint64(nil, inc)
	var out []store.CountedCrash
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		body, ok := unseal(k, v)
		crash, n := binary.Uvarint(body)
		at, m := binary.Varint(body[max(n, 0):])
		if !ok || len(k) != len(prefix)+16 || n <= 0 || m <= 0 || n+m != len(body) {
			return nil, corrupt("the record of a crash counted against incarnation %d fails its check (key %x)", inc, k)
		}
		out = append(out, store.CountedCrash{ID: idString(k[len(prefix):]), Crash: int(crash),
			At: time.UnixMicro(at).UTC()})
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dropCrashes forgets the crashes counted against every incarnation but
// keep: their processes died (one process holds the file), and their
// crashes stand.
func (t *txn) dropCrashes(keep uint64) error {
	b := t.bucket(bucketCrashes)
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 8 || binary.BigEndian.Uint64(k) != keep || keep == 0 {
			keys = append(keys, bytes.Clone(k))
		}
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
