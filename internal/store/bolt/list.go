package bolt

import (
	"bytes"
	"slices"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Messages calls fn for the messages matching f in id order (descending
// with f.Reverse). With statuses it merges the status index's per-status
// runs, so it reads only messages of those statuses; without, it reads the
// messages bucket from f.After on.
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
	if f.Key != "" {
		return stopped(t.keyed(f.Key, after, f.Reverse, emit))
	}
	if len(f.Statuses) > 0 {
		return stopped(t.messagesByStatus(f.Statuses, after, f.Reverse, emit))
	}
	decode := func(k, v []byte) error {
		m, err := decodeMessage(k, v)
		if err != nil {
			return err
		}
		return emit(m.Message)
	}
	if f.Reverse {
		return stopped(t.walkBack(t.bucket(bucketMessages), after, decode))
	}
	return stopped(t.walk(t.bucket(bucketMessages), nil, after, true, decode))
}

// walkBack calls fn with each key and value of b below before (every one
// when before is nil), in descending key order. Like walk's, fn may change
// the bucket in a writable transaction.
func (t *txn) walkBack(b *bbolt.Bucket, before []byte, fn func(k, v []byte) error) error {
	c := b.Cursor()
	back := func(from []byte) ([]byte, []byte) {
		if from == nil {
			return c.Last()
		}
		if k, _ := c.Seek(from); k == nil {
			return c.Last()
		}
		return c.Prev()
	}
	k, v := back(before)
	for k != nil {
		last := bytes.Clone(k)
		if err := fn(k, v); err != nil {
			return err
		}
		if t.tx.Writable() {
			k, v = back(last)
			continue
		}
		k, v = c.Prev()
	}
	return nil
}

// statusRun is a cursor over the index entries of one status; id is the
// message it stands on, nil when the run is exhausted.
type statusRun struct {
	c      *bbolt.Cursor
	prefix []byte
	id     []byte
	// seek and step move the run in the walk's direction.
	seek func(from []byte)
	step func()
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

// seekBefore places the run on its last message with an id below before,
// or its last message when before is nil.
func (r *statusRun) seekBefore(before []byte) {
	start := append(bytes.Clone(r.prefix), before...)
	if before == nil {
		start = []byte{r.prefix[0] + 1} // past the run: status codes are single bytes
	}
	k, _ := r.c.Seek(start)
	if k == nil {
		k, _ = r.c.Last()
	} else {
		k, _ = r.c.Prev()
	}
	r.set(k)
}

func (r *statusRun) next() {
	k, _ := r.c.Next()
	r.set(k)
}

func (r *statusRun) prev() {
	k, _ := r.c.Prev()
	r.set(k)
}

func (r *statusRun) set(k []byte) {
	r.id = nil
	if k != nil && bytes.HasPrefix(k, r.prefix) {
		r.id = bytes.Clone(k[len(r.prefix):])
	}
}

// messagesByStatus is a k-way merge of the status index runs: each step
// hands out the smallest id among the runs' current entries (the largest,
// reverse), so the ids come in order and the cost is that of the rows read.
func (t *txn) messagesByStatus(statuses []domain.Status, after []byte, reverse bool, fn func(*domain.Message) error) error {
	idx := t.bucket(bucketStatus)
	var runs []*statusRun
	for _, s := range statuses {
		prefix := statusKey(s, uuid.UUID{})[:1]
		if slices.ContainsFunc(runs, func(r *statusRun) bool { return bytes.Equal(r.prefix, prefix) }) {
			continue
		}
		r := &statusRun{c: idx.Cursor(), prefix: prefix}
		seek, step := r.seekAfter, r.next
		if reverse {
			seek, step = r.seekBefore, r.prev
		}
		r.seek, r.step = seek, step
		r.seek(after)
		runs = append(runs, r)
	}
	order := 1 // the next id is the smallest
	if reverse {
		order = -1 // the largest
	}
	for {
		var first *statusRun
		for _, r := range runs {
			if r.id != nil && (first == nil || bytes.Compare(r.id, first.id)*order < 0) {
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
			first.step()
			continue
		}
		// fn may have changed the index; find every run's place again.
		for _, r := range runs {
			r.seek(id)
		}
	}
}
