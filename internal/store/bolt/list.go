package bolt

import (
	"bytes"
	"slices"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Messages calls fn for the messages matching f in id order. With statuses
// it merges the status index's per-status runs, so it reads only messages of
// those statuses; without, it reads the messages bucket from f.After on.
func (t *txn) Messages(f store.MessageFilter, fn func(*domain.Message) error) error {
	lim := limiter{limit: f.Limit}
	emit := func(m *domain.Message) error {
		if !f.Match(m) {
			return nil
		}
		if err := fn(m); err != nil {
			return err
		}
		if lim.done() {
			return store.ErrStop
		}
		return nil
	}
	var after []byte
	if f.After != "" {
		key, err := parseID(f.After)
		if err != nil {
			return err
		}
		after = key[:]
	}
	if len(f.Statuses) > 0 {
		return stopped(t.messagesByStatus(f.Statuses, after, emit))
	}
	err := t.walk(t.bucket(bucketMessages), nil, after, true, func(k, v []byte) error {
		m, err := decodeMessage(k, v)
		if err != nil {
			return err
		}
		return emit(m.Message)
	})
	return stopped(err)
}

// statusRun is a cursor over the index entries of one status; id is the
// message it stands on, nil when the run is exhausted.
type statusRun struct {
	c      *bbolt.Cursor
	prefix []byte
	id     []byte
}

// seekAfter places the run on its first message with an id above after.
func (r *statusRun) seekAfter(after []byte) {
	start := append(bytes.Clone(r.prefix), after...)
	k, _ := r.c.Seek(start)
	if k != nil && bytes.Equal(k, start) {
		k, _ = r.c.Next()
	}
	r.set(k)
}

func (r *statusRun) next() {
	k, _ := r.c.Next()
	r.set(k)
}

func (r *statusRun) set(k []byte) {
	r.id = nil
	if k != nil && bytes.HasPrefix(k, r.prefix) {
		r.id = bytes.Clone(k[len(r.prefix):])
	}
}

// messagesByStatus is a k-way merge of the status index runs: each step
// hands out the smallest id among the runs' current entries, so the ids come
// in order and the cost is that of the rows read.
func (t *txn) messagesByStatus(statuses []domain.Status, after []byte, fn func(*domain.Message) error) error {
	idx := t.bucket(bucketStatus)
	var runs []*statusRun
	for _, s := range statuses {
		prefix := statusKey(s, uuid.UUID{})[:1]
		if slices.ContainsFunc(runs, func(r *statusRun) bool { return bytes.Equal(r.prefix, prefix) }) {
			continue
		}
		r := &statusRun{c: idx.Cursor(), prefix: prefix}
		r.seekAfter(after)
		runs = append(runs, r)
	}
	for {
		var first *statusRun
		for _, r := range runs {
			if r.id != nil && (first == nil || bytes.Compare(r.id, first.id) < 0) {
				first = r
			}
		}
		if first == nil {
			return nil
		}
		id := first.id
		m, err := t.stored(uuid.UUID(id))
		if err != nil {
			return corrupt("status index names a missing message: %v", err)
		}
		if err := fn(m.Message); err != nil {
			return err
		}
		if !t.tx.Writable() {
			first.next()
			continue
		}
		// fn may have changed the index; find every run's place again.
		for _, r := range runs {
			r.seekAfter(id)
		}
	}
}
