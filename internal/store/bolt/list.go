package bolt

import (
	"bytes"
	"encoding/binary"
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
	var last []byte
	var n tally
	decode := func(k, v []byte) error {
		// A sound bucket hands out its keys in order, each once.
		if last != nil && (bytes.Compare(k, last) <= 0) != f.Reverse {
			return corrupt("the messages bucket lists %s after %s", idString(k), idString(last))
		}
		last = append(last[:0], k...)
		m, err := decodeMessage(k, v, t.legacy)
		if err != nil {
			return err
		}
		n.add(m.Message)
		return emit(m.Message)
	}
	var err error
	if f.Reverse {
		err = t.walkBack(t.bucket(bucketMessages), after, decode)
	} else {
		err = t.walk(t.bucket(bucketMessages), nil, after, true, decode)
	}
	if err == nil && after == nil {
		err = t.checkCount(nil, n)
	}
	return stopped(err)
}

// tally counts the messages a walk found, by status, and those that
// passed through an inbound queue (which counts them DLVD as well).
type tally struct {
	by     map[domain.Status]int64
	passed int64
	// exactDLVD: the counts the walk is checked against are those of the
	// DLVD messages, without those that passed through (keyPassed).
	exactDLVD bool
}

func (n *tally) add(m *domain.Message) {
	if n.by == nil {
		n.by = map[domain.Status]int64{}
	}
	n.by[m.Status]++
	if m.InboundQueue != "" {
		n.passed++
	}
}

// checkCounts compares the messages a whole walk found (found; with
// statuses, only those statuses were walked) with what the queue records
// count, in a read-only transaction (a writer may change them as it
// walks): a damaged page can hide messages from a walk, and a list that
// leaves them out is wrong data. An inbound queue counts the messages that
// passed through it as DLVD: a walk of every message sees them (passed),
// one of DLVD messages does not, and finds at most what the queues count.
func checkCounts(counts map[domain.Status]int64, statuses []domain.Status, found tally, where string) error {
	for _, s := range storedStatuses {
		if len(statuses) > 0 && !slices.Contains(statuses, s) {
			continue
		}
		got, want := found.by[s], counts[s]
		switch {
		case s == domain.StatusDLVD && len(statuses) == 0:
			got += found.passed
		case s == domain.StatusDLVD && !found.exactDLVD:
			if got <= want {
				continue
			}
		}
		if got != want {
			return corrupt("%s: %d messages %s found, %d counted", where, got, s, want)
		}
	}
	return nil
}

// checkCount checks a whole walk of the store's messages (checkCounts).
func (t *txn) checkCount(statuses []domain.Status, found tally) error {
	if t.tx.Writable() {
		return nil
	}
	want := map[domain.Status]int64{}
	var passed int64
	exact := true
	err := t.Queues("", func(q *store.QueueRecord) error {
		for s, n := range q.Counts {
			want[s] += n
		}
		n, ok, err := t.passed(q.Name)
		passed, exact = passed+n, exact && ok
		return err
	})
	if err != nil {
		return err
	}
	if exact && slices.Contains(statuses, domain.StatusDLVD) {
		// The queues' DLVD counts less what passed through: the DLVD
		// messages themselves, exactly.
		want[domain.StatusDLVD] -= passed
		found.exactDLVD = true
	}
	return checkCounts(want, statuses, found, "the store's messages")
}

// keyPassed starts the meta keys that count, per inbound queue, the
// messages that routing moved on from it and that are kept (§3): they are
// counted DLVD in their inbound queue, and are not DLVD messages of it.
const keyPassed = "passed\x00"

// passed returns how many of the messages an inbound queue counts DLVD
// passed through it; ok is false in a store of layout version 2, which did
// not count them.
func (t *txn) passed(queue string) (n int64, ok bool, err error) {
	if t.legacy {
		return 0, false, nil
	}
	k := []byte(keyPassed + queue)
	v := t.bucket(bucketMeta).Get(k)
	if v == nil {
		return 0, true, nil
	}
	body, sound := sealedFixed(k, v, 8, false)
	if !sound {
		return 0, false, corrupt("queue %s: the count of the messages that passed through it does not match its checksum", queue)
	}
	return int64(binary.BigEndian.Uint64(body)), true, nil
}

// addPassed adds n to the messages counted as passed through an inbound
// queue (keyPassed).
func (t *txn) addPassed(queue string, n int64) error {
	if t.legacy {
		return nil // not counted: a store of layout version 2 did not
	}
	cur, _, err := t.passed(queue)
	if err != nil {
		return err
	}
	k := []byte(keyPassed + queue)
	if cur+n <= 0 {
		return t.bucket(bucketMeta).Delete(k)
	}
	return t.bucket(bucketMeta).Put(k, seal(k, binary.BigEndian.AppendUint64(nil, uint64(cur+n))))
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
		prefix := indexKey(s, uuid.UUID{}, t.oldOrder)[:1]
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
	var found tally
	for {
		var first *statusRun
		for _, r := range runs {
			if r.id != nil && (first == nil || bytes.Compare(r.id, first.id)*order < 0) {
				first = r
			}
		}
		if first == nil {
			if after != nil {
				return nil
			}
			return t.checkCount(statuses, found)
		}
		id := first.id
		key, err := storedID(id, "an entry of the status index")
		if err != nil {
			return err
		}
		m, err := t.stored(key)
		if err != nil {
			return indexMiss("an entry of the status index", err)
		}
		if s, _ := indexStatus(first.prefix[0], t.oldOrder); s != m.Status {
			return corrupt("the status index lists message %s as %s, its record says %s", m.ID, s, m.Status)
		}
		found.add(m.Message)
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
