package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Queue returns a copy of one queue's record.
func (t *txn) Queue(name string) (*store.QueueRecord, error) {
	q, err := t.queue(name)
	if err != nil {
		return nil, err
	}
	c := *q
	c.Counts = maps.Clone(q.Counts)
	return &c, nil
}

// queue returns the transaction's own record of a queue: decoded once,
// changed in place, and written back once when the transaction's function
// ends (flush), however many messages of the queue it changed.
func (t *txn) queue(name string) (*store.QueueRecord, error) {
	if q, ok := t.queues[name]; ok {
		return q, nil
	}
	v := t.bucket(bucketQueues).Get([]byte(name))
	if v == nil {
		return nil, domain.NotFoundf("queue %s does not exist", name)
	}
	q, err := decodeQueue(name, v, t.legacy)
	if err != nil {
		return nil, err
	}
	q.Epoch, q.Owner = t.epoch(), t.owner
	if t.queues == nil {
		t.queues = map[string]*store.QueueRecord{}
	}
	t.queues[name] = q
	return q, nil
}

// putQueue marks a queue's record as changed; flush writes it.
func (t *txn) putQueue(q *store.QueueRecord) error {
	if t.queues == nil {
		t.queues = map[string]*store.QueueRecord{}
	}
	t.queues[q.Name] = q
	if t.dirty == nil {
		t.dirty = map[string]bool{}
	}
	t.dirty[q.Name] = true
	return nil
}

// flush writes the queue records the transaction changed, or fails with
// the damage the transaction found (fail).
func (t *txn) flush() error {
	if t.err != nil {
		return t.err
	}
	for name := range t.dirty {
		q := t.queues[name]
		if err := t.bucket(bucketQueues).Put([]byte(name), encodeQueue(q)); err != nil {
			return fmt.Errorf("queue %s: store: %w", name, err)
		}
	}
	clear(t.dirty)
	return nil
}

// Queues calls fn for each queue in name order after the name `after`.
func (t *txn) Queues(after string, fn func(*store.QueueRecord) error) error {
	if err := t.flush(); err != nil {
		return err
	}
	epoch := t.epoch()
	err := t.walk(t.bucket(bucketQueues), nil, []byte(after), true, func(k, v []byte) error {
		q, err := decodeQueue(string(k), v, t.legacy)
		if err != nil {
			return err
		}
		q.Epoch, q.Owner = epoch, t.owner
		return fn(q)
	})
	return stopped(err)
}

// SetStopped stops or starts delivery of an existing queue.
func (t *txn) SetStopped(queue string, stopped bool) error {
	q, err := t.queue(queue)
	if err != nil {
		return err
	}
	if q.Stopped == stopped {
		return nil
	}
	q.Stopped = stopped
	return t.putQueue(q)
}

// queueFor returns the record of m's queue, a new one on the queue's first
// message: qos and stage come from the message, and an outbound queue
// delivers to the message's receiver.
func (t *txn) queueFor(m *domain.Message, h domain.HistoryEntry) (*store.QueueRecord, error) {
	q, err := t.queue(m.Queue)
	if err == nil {
		return q, nil
	}
	if t.bucket(bucketQueues).Get([]byte(m.Queue)) != nil {
		return nil, err
	}
	q = &store.QueueRecord{
		Name:      m.Queue,
		QoS:       m.QoS,
		Stage:     m.Stage,
		Counts:    map[domain.Status]int64{},
		CreatedAt: h.At,
	}
	if q.CreatedAt.IsZero() {
		q.CreatedAt = t.now()
	}
	if m.Stage == domain.Outbound {
		q.Receiver = m.Receiver
	}
	return q, nil
}

// QueueMessages calls fn for a queue's messages in seq order after p.AfterSeq,
// reading the open index when p.Open is set, and that of an app queue in a
// queue app queues share when p.AppQueue is set too.
func (t *txn) QueueMessages(queue string, p store.QueueMessagesParams, fn func(*domain.Message) error) error {
	if p.AfterSeq == math.MaxUint64 {
		return nil
	}
	b, prefix, start := t.bucket(bucketQueueAll), prefixOf(queue), seqKey(queue, p.AfterSeq+1)
	if p.Open {
		b = t.bucket(bucketQueueOpen)
	}
	indexed := p.Open && p.AppQueue != "" && domain.SharedQueueName(queue)
	if indexed {
		b, prefix = t.bucket(bucketAppOpen), append(prefixOf(queue), prefixOf(p.AppQueue)...)
		start = appKey(queue, p.AppQueue, p.AfterSeq+1)
	}
	lim := limiter{limit: p.Limit}
	var found tally
	lastSeq := p.AfterSeq
	err := t.walk(b, prefix, start, false, func(k, v []byte) error {
		id, err := storedID(v, fmt.Sprintf("queue %s: an index entry", queue))
		if err != nil {
			return err
		}
		m, err := t.stored(id)
		if err != nil {
			return indexMiss(fmt.Sprintf("queue %s: an index entry", queue), err)
		}
		// The key is a copy of the record's queue, seq (and app queue).
		if m.Queue != queue || len(k) < 8 || m.Seq != binary.BigEndian.Uint64(k[len(k)-8:]) || m.Seq <= lastSeq ||
			(p.Open && !open(m.Status)) || (indexed && m.AppQueue != p.AppQueue) {
			return corrupt("queue %s: the index entry %x names message %s, which is %s in queue %s at seq %d",
				queue, k, m.ID, m.Status, m.Queue, m.Seq)
		}
		found.add(m.Message)
		lastSeq = m.Seq
		if !indexed && p.AppQueue != "" && m.AppQueue != p.AppQueue {
			return nil
		}
		if err := fn(m.Message); err != nil {
			return err
		}
		if lim.done() {
			return store.ErrStop
		}
		return nil
	})
	if err == nil && p.AfterSeq == 0 && p.AppQueue == "" && !t.tx.Writable() {
		err = t.checkQueueCount(queue, p.Open, found)
	}
	return stopped(err)
}

// checkQueueCount compares the messages a whole walk of a queue's index
// found (open ones, with open) with what its record counts (checkCounts):
// a damaged page can hide index entries from a walk. PEND messages have no
// seq and are in no queue index.
func (t *txn) checkQueueCount(name string, openOnly bool, found tally) error {
	q, err := t.queue(name)
	if errors.Is(err, domain.ErrNotFound) && len(found.by) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	var statuses []domain.Status
	for _, s := range storedStatuses {
		if s != domain.StatusPEND && (!openOnly || open(s)) {
			statuses = append(statuses, s)
		}
	}
	counts := q.Counts
	if n, ok, err := t.passed(name); err != nil {
		return err
	} else if ok && !openOnly {
		counts = maps.Clone(q.Counts)
		counts[domain.StatusDLVD] -= n
		found.exactDLVD = true
	}
	return checkCounts(counts, statuses, found, "queue "+name)
}

// Head returns the open message of the queue that decides its state
// (domain.HeadPriority). The queue's counts say how high a rank can be
// found at all, so the walk stops at the first message of that rank: at
// once, unless a message blocks or WAITs somewhere in an EO queue.
func (t *txn) Head(queue string) (*domain.Message, error) {
	q, err := t.queue(queue)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	best, head := q.HeadRank(), (*domain.Message)(nil)
	rank := -1
	err = t.QueueMessages(queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
		if p := domain.HeadPriority(m.QoS, m.Status, m.ErrorClass); p > rank {
			rank, head = p, m
			if p >= best {
				return store.ErrStop
			}
		}
		return nil
	})
	return head, err
}

// count adds n to the counters of q that m counts in: its status and, if
// it is passed over, PassedOver; if it is a stuck transaction, Stuck.
func count(q *store.QueueRecord, m *domain.Message, n int64) {
	q.Counts[m.Status] += n
	if q.Counts[m.Status] <= 0 {
		delete(q.Counts, m.Status)
	}
	if passedOver(m) {
		q.PassedOver += n
	}
	if domain.CountsStuck(m) {
		q.Stuck += n
	}
}

func passedOver(m *domain.Message) bool {
	return domain.PassedOver(m.QoS, m.Status, m.ErrorClass)
}

// DeleteQueue removes an empty queue's record, and its count of the
// messages that passed through it. The store has one writer at a time, so
// no message can join the queue while it is deleted.
func (t *txn) DeleteQueue(name string) error {
	q, err := t.queue(name)
	if err != nil {
		return err
	}
	if q.Holds() {
		return store.QueueHolds(q)
	}
	if err := t.bucket(bucketQueues).Delete([]byte(name)); err != nil {
		return fmt.Errorf("queue %s: delete: %w", name, err)
	}
	if !t.legacy {
		if err := t.bucket(bucketMeta).Delete([]byte(keyPassed + name)); err != nil {
			return fmt.Errorf("queue %s: delete: %w", name, err)
		}
	}
	delete(t.queues, name)
	delete(t.dirty, name)
	return nil
}
