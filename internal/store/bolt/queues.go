package bolt

import (
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Queue returns one queue's record.
func (t *txn) Queue(name string) (*store.QueueRecord, error) {
	v := t.bucket(bucketQueues).Get([]byte(name))
	if v == nil {
		return nil, domain.NotFoundf("queue %s does not exist", name)
	}
	q, err := decodeQueue(name, v)
	if err != nil {
		return nil, err
	}
	q.Epoch = t.epoch()
	return q, nil
}

// Queues calls fn for each queue in name order after the name `after`.
func (t *txn) Queues(after string, fn func(*store.QueueRecord) error) error {
	epoch := t.epoch()
	err := t.walk(t.bucket(bucketQueues), nil, []byte(after), true, func(k, v []byte) error {
		q, err := decodeQueue(string(k), v)
		if err != nil {
			return err
		}
		q.Epoch = epoch
		return fn(q)
	})
	return stopped(err)
}

// SetStopped stops or starts delivery of an existing queue.
func (t *txn) SetStopped(queue string, stopped bool) error {
	q, err := t.Queue(queue)
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
	q, err := t.Queue(m.Queue)
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

func (t *txn) putQueue(q *store.QueueRecord) error {
	if err := t.bucket(bucketQueues).Put([]byte(q.Name), encodeQueue(q)); err != nil {
		return fmt.Errorf("queue %s: store: %w", q.Name, err)
	}
	return nil
}

// QueueMessages calls fn for a queue's messages in seq order after p.AfterSeq,
// reading the open index when p.Open is set.
func (t *txn) QueueMessages(queue string, p store.QueueMessagesParams, fn func(*domain.Message) error) error {
	if p.AfterSeq == math.MaxUint64 {
		return nil
	}
	b := t.bucket(bucketQueueAll)
	if p.Open {
		b = t.bucket(bucketQueueOpen)
	}
	lim := limiter{limit: p.Limit}
	err := t.walk(b, prefixOf(queue), seqKey(queue, p.AfterSeq+1), false, func(_, v []byte) error {
		m, err := t.stored(uuid.UUID(v))
		if err != nil {
			return fmt.Errorf("queue %s: index names a missing message: %w", queue, err)
		}
		if err := fn(m.Message); err != nil {
			return err
		}
		if lim.done() {
			return store.ErrStop
		}
		return nil
	})
	return stopped(err)
}

// Head returns the first open message of the queue that holds it up.
func (t *txn) Head(queue string) (*domain.Message, error) {
	var head *domain.Message
	err := t.QueueMessages(queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
		if domain.PassedOver(m.QoS, m.Status, m.ErrorClass) {
			return nil
		}
		head = m
		return store.ErrStop
	})
	return head, err
}

// count adds n to the counters of q that m counts in: its status and, if
// it is passed over, PassedOver.
func count(q *store.QueueRecord, m *domain.Message, n int64) {
	q.Counts[m.Status] += n
	if q.Counts[m.Status] <= 0 {
		delete(q.Counts, m.Status)
	}
	if passedOver(m) {
		q.PassedOver += n
	}
}

func passedOver(m *domain.Message) bool {
	return domain.PassedOver(m.QoS, m.Status, m.ErrorClass)
}
