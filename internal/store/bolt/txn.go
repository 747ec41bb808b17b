package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// txn is the Reader and Writer of one function's part of a bbolt
// transaction (the functions of a grouped commit share the transaction,
// each with its own txn). It keeps the queue records it read, and writes
// those it changed when the function ends (flush).
type txn struct {
	tx     *bbolt.Tx
	clock  func() time.Time
	queues map[string]*store.QueueRecord
	dirty  map[string]bool
	// epochValue is the lease epoch, once epochRead.
	epochRead  bool
	epochValue uint64
	// eoio is the EOIO switch state, once read.
	eoio *domain.EOIOSwitch
	// owner is the node serving the store when the transaction began
	// (QueueRecord.Owner).
	owner string
	// legacy accepts the unsealed values of a store of layout version 2
	// (seal.go).
	legacy bool
	// oldOrder: the status index is in the order of layout version 2 (a
	// store of version 2 opened read-only; statusKey).
	oldOrder bool
	// err is damage found where the reader has no error to return (the
	// lease epoch): the transaction fails with it (flush).
	err error
	// buckets holds the buckets the transaction opened, by name, so that
	// each is looked up in the root once.
	buckets map[string]*bbolt.Bucket
}

var (
	_ store.Reader = (*txn)(nil)
	_ store.Writer = (*txn)(nil)
)

// bucket returns one of the buckets Open made sure exist.
func (t *txn) bucket(name string) *bbolt.Bucket {
	if b := t.buckets[name]; b != nil {
		return b
	}
	b := t.tx.Bucket([]byte(name))
	if b == nil {
		return nil
	}
	if appendMostly[name] && t.tx.Writable() {
		b.FillPercent = 0.9
	}
	if t.buckets == nil {
		t.buckets = make(map[string]*bbolt.Bucket, 8)
	}
	t.buckets[name] = b
	return b
}

// epoch is the lease epoch of every queue: the one process that holds the
// file holds every lease, and each Join starts a new epoch.
func (t *txn) epoch() uint64 {
	if t.epochRead {
		return t.epochValue
	}
	v := t.bucket(bucketMeta).Get([]byte(keyEpoch))
	t.epochRead, t.epochValue = true, 0
	if v != nil {
		body, ok := sealedFixed([]byte(keyEpoch), v, 8, t.legacy)
		if !ok {
			t.fail(corrupt("the lease epoch does not match its checksum"))
			return 0
		}
		t.epochValue = binary.BigEndian.Uint64(body)
	}
	return t.epochValue
}

// fail records damage found where no error can be returned; the first
// sticks.
func (t *txn) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// now is the store's clock, to the microsecond that the store keeps: for
// the times a caller left zero, and the engine's times.
func (t *txn) now() time.Time {
	return t.clock().UTC().Truncate(time.Microsecond)
}

// walk calls fn with each key and value of b that starts with prefix, in key
// order, from the first key at or after start (after it, when skipStart is
// set and start exists). The value is only valid during fn.
//
// fn may change the bucket (a bulk action walks the messages it changes).
// bbolt cursors are invalid after a change, so in a writable transaction
// walk finds its place again by seeking the last key it visited.
func (t *txn) walk(b *bbolt.Bucket, prefix, start []byte, skipStart bool, fn func(k, v []byte) error) error {
	c := b.Cursor()
	k, v := c.Seek(start)
	if skipStart && k != nil && bytes.Equal(k, start) {
		k, v = c.Next()
	}
	for k != nil && bytes.HasPrefix(k, prefix) {
		last := bytes.Clone(k)
		if err := fn(k, v); err != nil {
			return err
		}
		if t.tx.Writable() {
			k, v = c.Seek(last)
			if k != nil && bytes.Equal(k, last) {
				k, v = c.Next()
			}
			continue
		}
		k, v = c.Next()
	}
	return nil
}

// limiter counts the rows handed out and ends a walk at the limit.
type limiter struct {
	limit, n int
}

// done records one row and reports whether the limit is reached.
func (l *limiter) done() bool {
	l.n++
	return l.limit > 0 && l.n >= l.limit
}

// stopped turns store.ErrStop, by which a walk function ends the walk, into
// success.
func stopped(err error) error {
	if errors.Is(err, store.ErrStop) {
		return nil
	}
	return err
}
