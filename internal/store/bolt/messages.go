package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Message returns one message, without payload and history.
func (t *txn) Message(id string) (*domain.Message, error) {
	v := t.bucket(bucketMessages).Get([]byte(id))
	if v == nil {
		return nil, domain.NotFoundf("message %s does not exist", id)
	}
	return decodeMessage(v)
}

// Payload returns a copy of the message's payload.
func (t *txn) Payload(id string) ([]byte, error) {
	if t.bucket(bucketMessages).Get([]byte(id)) == nil {
		return nil, domain.NotFoundf("message %s does not exist", id)
	}
	return append([]byte{}, t.bucket(bucketPayloads).Get([]byte(id))...), nil
}

// History returns the message's status changes, oldest first.
func (t *txn) History(id string) ([]domain.HistoryEntry, error) {
	if t.bucket(bucketMessages).Get([]byte(id)) == nil {
		return nil, domain.NotFoundf("message %s does not exist", id)
	}
	var out []domain.HistoryEntry
	prefix := prefixOf(id)
	err := t.walk(t.bucket(bucketHistory), prefix, prefix, false, func(_, v []byte) error {
		h, err := decodeHistory(v)
		if err != nil {
			return fmt.Errorf("message %s: %w", id, err)
		}
		out = append(out, h)
		return nil
	})
	return out, err
}

// Insert stores a new message. It sets m.Size and m.Seq (and CreatedAt and
// UpdatedAt when they are zero) on the caller's value as they are stored.
func (t *txn) Insert(m *domain.Message, payload []byte, h domain.HistoryEntry) error {
	if err := checkNew(m); err != nil {
		return err
	}
	if t.bucket(bucketMessages).Get([]byte(m.ID)) != nil {
		return domain.Conflictf("message %s exists already", m.ID)
	}
	q, err := t.queueFor(m, h)
	if err != nil {
		return err
	}
	if h.At.IsZero() {
		h.At = now()
	}
	h.From, h.To = "", m.Status
	m.Size, m.Seq = int64(len(payload)), 0
	if m.Status != domain.StatusPEND {
		q.LastSeq++
		m.Seq = q.LastSeq
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = h.At
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	// bbolt keeps a reference to a value until commit: the payload is
	// copied so the caller may reuse its buffer.
	if err := t.bucket(bucketPayloads).Put([]byte(m.ID), append([]byte{}, payload...)); err != nil {
		return fmt.Errorf("message %s: store payload: %w", m.ID, err)
	}
	if err := t.putMessage(m); err != nil {
		return err
	}
	if err := t.appendHistory(m.ID, h); err != nil {
		return err
	}
	if err := t.index(m, "", 0); err != nil {
		return err
	}
	count(q, m, 1)
	return t.putQueue(q)
}

// checkNew checks what Insert needs of a message.
func checkNew(m *domain.Message) error {
	if err := validName("message id", m.ID); err != nil {
		return err
	}
	if err := validName(fmt.Sprintf("message %s: queue", m.ID), m.Queue); err != nil {
		return err
	}
	switch {
	case m.QoS != domain.EO && m.QoS != domain.EOIO:
		return domain.Invalidf("message %s: qos %q must be EO or EOIO", m.ID, m.QoS)
	case m.Stage != domain.Inbound && m.Stage != domain.Outbound:
		return domain.Invalidf("message %s: stage %q must be inbound or outbound", m.ID, m.Stage)
	case !m.Status.Valid():
		return domain.Invalidf("message %s: status %q is not a status", m.ID, m.Status)
	}
	return nil
}

// Transition changes a message's status by compare-and-set.
func (t *txn) Transition(p store.TransitionParams) (*domain.Message, error) {
	if !p.To.Valid() {
		return nil, domain.Invalidf("message %s: status %q is not a status", p.ID, p.To)
	}
	cur, err := t.Message(p.ID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(p.From, cur.Status) {
		return nil, domain.Conflictf("message %s: status is %s, expected %s", p.ID, cur.Status, joinStatuses(p.From))
	}
	if p.To == domain.StatusPEND && cur.Status != domain.StatusPEND {
		return nil, domain.Invalidf("message %s: status %s cannot go back to PEND", p.ID, cur.Status)
	}
	q, err := t.Queue(cur.Queue)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", p.ID, err)
	}
	next := cur.Clone()
	if p.Update != nil {
		p.Update(next)
		if next.ID != cur.ID || next.Queue != cur.Queue || next.Seq != cur.Seq || next.Status != cur.Status {
			return nil, fmt.Errorf("message %s: a transition's Update must not change the id, queue, seq or status", p.ID)
		}
	}
	h := p.History
	if h.At.IsZero() {
		h.At = now()
	}
	h.From, h.To = cur.Status, p.To
	next.Status, next.UpdatedAt, next.History = p.To, h.At, nil
	if cur.Status == domain.StatusPEND && p.To != domain.StatusPEND {
		q.LastSeq++
		next.Seq = q.LastSeq
	}
	if err := t.putMessage(next); err != nil {
		return nil, err
	}
	if err := t.appendHistory(next.ID, h); err != nil {
		return nil, err
	}
	if cur.Status != next.Status {
		if err := t.index(next, cur.Status, cur.Seq); err != nil {
			return nil, err
		}
	}
	if cur.Status == next.Status && passedOver(cur) == passedOver(next) {
		return next, nil
	}
	count(q, cur, -1)
	count(q, next, 1)
	return next, t.putQueue(q)
}

// Delete removes a message and everything kept about it.
func (t *txn) Delete(id string) error {
	m, err := t.Message(id)
	if err != nil {
		return err
	}
	q, err := t.Queue(m.Queue)
	if err != nil {
		return fmt.Errorf("message %s: %w", id, err)
	}
	if err := t.unindex(m.ID, m.Queue, m.Status, m.Seq); err != nil {
		return err
	}
	hist := t.bucket(bucketHistory)
	var keys [][]byte
	prefix := prefixOf(id)
	c := hist.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := hist.Delete(k); err != nil {
			return fmt.Errorf("message %s: delete history: %w", id, err)
		}
	}
	if err := t.bucket(bucketPayloads).Delete([]byte(id)); err != nil {
		return fmt.Errorf("message %s: delete payload: %w", id, err)
	}
	if err := t.bucket(bucketMessages).Delete([]byte(id)); err != nil {
		return fmt.Errorf("message %s: delete: %w", id, err)
	}
	count(q, m, -1)
	return t.putQueue(q)
}

func (t *txn) putMessage(m *domain.Message) error {
	v, err := encodeMessage(m)
	if err != nil {
		return fmt.Errorf("message %s: encode: %w", m.ID, err)
	}
	if err := t.bucket(bucketMessages).Put([]byte(m.ID), v); err != nil {
		return fmt.Errorf("message %s: store: %w", m.ID, err)
	}
	return nil
}

// appendHistory stores h after the message's last history entry.
func (t *txn) appendHistory(id string, h domain.HistoryEntry) error {
	b := t.bucket(bucketHistory)
	prefix := prefixOf(id)
	var n uint32
	c := b.Cursor()
	k, _ := c.Seek(historyKey(id, math.MaxUint32))
	if k == nil {
		k, _ = c.Last()
	} else if !bytes.Equal(k, historyKey(id, math.MaxUint32)) {
		k, _ = c.Prev()
	}
	if k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+4 {
		n = binary.BigEndian.Uint32(k[len(prefix):]) + 1
	}
	v, err := encodeHistory(h)
	if err != nil {
		return fmt.Errorf("message %s: encode history: %w", id, err)
	}
	if err := b.Put(historyKey(id, n), v); err != nil {
		return fmt.Errorf("message %s: store history: %w", id, err)
	}
	return nil
}

// open reports whether a message in status s still takes part in its
// queue's delivery: it is in the queue_open index.
func open(s domain.Status) bool {
	return s != domain.StatusPEND && !s.Final()
}

// index moves m's index entries from its previous status and seq (none for
// a new message) to its current ones.
func (t *txn) index(m *domain.Message, prev domain.Status, prevSeq uint64) error {
	if prev != "" {
		if err := t.unindex(m.ID, m.Queue, prev, prevSeq); err != nil {
			return err
		}
	}
	if err := t.bucket(bucketStatus).Put(statusKey(m.Status, m.ID), []byte{}); err != nil {
		return fmt.Errorf("message %s: index status: %w", m.ID, err)
	}
	if m.Seq == 0 {
		return nil
	}
	if err := t.bucket(bucketQueueAll).Put(seqKey(m.Queue, m.Seq), []byte(m.ID)); err != nil {
		return fmt.Errorf("message %s: index queue order: %w", m.ID, err)
	}
	if open(m.Status) {
		if err := t.bucket(bucketQueueOpen).Put(seqKey(m.Queue, m.Seq), []byte(m.ID)); err != nil {
			return fmt.Errorf("message %s: index open queue order: %w", m.ID, err)
		}
	}
	return nil
}

// unindex removes a message's index entries for a status and seq.
func (t *txn) unindex(id, queue string, s domain.Status, seq uint64) error {
	if err := t.bucket(bucketStatus).Delete(statusKey(s, id)); err != nil {
		return fmt.Errorf("message %s: unindex status: %w", id, err)
	}
	if seq == 0 {
		return nil
	}
	if err := t.bucket(bucketQueueAll).Delete(seqKey(queue, seq)); err != nil {
		return fmt.Errorf("message %s: unindex queue order: %w", id, err)
	}
	if err := t.bucket(bucketQueueOpen).Delete(seqKey(queue, seq)); err != nil {
		return fmt.Errorf("message %s: unindex open queue order: %w", id, err)
	}
	return nil
}

func joinStatuses(ss []domain.Status) string {
	if len(ss) == 0 {
		return "none"
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " or ")
}
