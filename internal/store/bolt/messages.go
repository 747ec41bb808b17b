package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Message returns one message, without payload and history.
func (t *txn) Message(id string) (*domain.Message, error) {
	m, _, err := t.lookup(id)
	return m.Message, err
}

// MessageByKey returns the message sender sent with an idempotency key.
func (t *txn) MessageByKey(sender, key string) (*domain.Message, error) {
	if b := t.bucket(bucketKeys); b != nil && key != "" {
		if id := b.Get(keyOf(key, sender)); len(id) == 16 {
			m, err := t.stored(uuid.UUID(id))
			return m.Message, err
		}
	}
	return nil, domain.NotFoundf("sender %s sent no message with the key %q", sender, key)
}

// keyed calls fn for the messages sent with an idempotency key, whatever
// their sender, in id order (descending with reverse) after after.
func (t *txn) keyed(key string, after []byte, reverse bool, fn func(*domain.Message) error) error {
	b := t.bucket(bucketKeys)
	if b == nil {
		return nil
	}
	var ids [][]byte
	prefix := append([]byte(key), 0)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if after == nil || (!reverse && bytes.Compare(v, after) > 0) || (reverse && bytes.Compare(v, after) < 0) {
			ids = append(ids, bytes.Clone(v))
		}
	}
	slices.SortFunc(ids, bytes.Compare)
	if reverse {
		slices.Reverse(ids)
	}
	for _, id := range ids {
		m, err := t.stored(uuid.UUID(id))
		if err != nil {
			return err
		}
		if err := fn(m.Message); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns a stored message and its key. A malformed id names no
// message.
func (t *txn) lookup(id string) (storedMessage, uuid.UUID, error) {
	key, err := parseID(id)
	if err != nil {
		return storedMessage{}, key, domain.NotFoundf("message %s does not exist", id)
	}
	m, err := t.stored(key)
	return m, key, err
}

// stored reads the message under key.
func (t *txn) stored(key uuid.UUID) (storedMessage, error) {
	v := t.bucket(bucketMessages).Get(key[:])
	if v == nil {
		return storedMessage{}, domain.NotFoundf("message %s does not exist", key)
	}
	return decodeMessage(key[:], v)
}

// Payload returns a copy of the message's payload.
func (t *txn) Payload(id string) ([]byte, error) {
	m, key, err := t.lookup(id)
	if err != nil {
		return nil, err
	}
	pk := m.payloadKey(key)
	return append([]byte{}, t.bucket(bucketPayloads).Get(pk[:])...), nil
}

// History returns the message's status changes, oldest first.
func (t *txn) History(id string) ([]domain.HistoryEntry, error) {
	_, key, err := t.lookup(id)
	if err != nil {
		return nil, err
	}
	h, err := decodeHistory(t.bucket(bucketHistory).Get(key[:]))
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", id, err)
	}
	return h, nil
}

// Insert stores a new message with its own payload. It sets m.Size and m.Seq
// (and CreatedAt and UpdatedAt when they are zero) on the caller's value as
// they are stored.
func (t *txn) Insert(m *domain.Message, payload []byte, h domain.HistoryEntry) error {
	m.Size = int64(len(payload))
	key, err := t.insert(m, h, false)
	if err != nil || len(payload) == 0 {
		return err
	}
	// bbolt keeps a reference to a value until commit: the payload is
	// copied so the caller may reuse its buffer.
	if err := t.bucket(bucketPayloads).Put(key[:], bytes.Clone(payload)); err != nil {
		return fmt.Errorf("message %s: store payload: %w", m.ID, err)
	}
	return nil
}

// insertShared stores a routed outbound message that shares its parent's
// payload (m.ParentID, m.Size set by the caller); the caller counts the
// references (addPayloadRefs), once for all of a parent's messages.
func (t *txn) insertShared(m *domain.Message, h domain.HistoryEntry) error {
	_, err := t.insert(m, h, true)
	return err
}

// insert stores a new message record, its first history entry, its index
// entries and counts.
func (t *txn) insert(m *domain.Message, h domain.HistoryEntry, shared bool) (uuid.UUID, error) {
	if err := checkNew(m); err != nil {
		return uuid.UUID{}, err
	}
	key, err := parseID(m.ID)
	if err != nil {
		return key, err
	}
	// A routed message's id is new (UUIDv7, made by the routing); any
	// other could be taken.
	if !shared && t.bucket(bucketMessages).Get(key[:]) != nil {
		return key, domain.Conflictf("message %s exists already", m.ID)
	}
	if m.Key != "" {
		keys := t.bucket(bucketKeys)
		k := keyOf(m.Key, m.Sender)
		if id := keys.Get(k); id != nil {
			return key, fmt.Errorf("message %s: key %q of sender %s is message %s's: %w", m.ID, m.Key, m.Sender,
				idString(id), store.ErrKeyExists)
		}
		if err := keys.Put(k, bytes.Clone(key[:])); err != nil {
			return key, fmt.Errorf("message %s: store its key: %w", m.ID, err)
		}
	}
	q, err := t.queueFor(m, h)
	if err != nil {
		return key, err
	}
	if h.At.IsZero() {
		h.At = t.now()
	}
	h.At = h.At.Truncate(time.Microsecond)
	h.From, h.To = "", m.Status
	m.Seq = 0
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
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC().Truncate(time.Microsecond), m.UpdatedAt.UTC().Truncate(time.Microsecond)
	storedTimes(m)
	if err := t.putMessage(key, m, shared); err != nil {
		return key, err
	}
	entry, err := appendHistoryEntry(nil, h) // a new message has no history yet
	if err != nil {
		return key, fmt.Errorf("message %s: encode history: %w", m.ID, err)
	}
	if err := t.bucket(bucketHistory).Put(key[:], entry); err != nil {
		return key, fmt.Errorf("message %s: store history: %w", m.ID, err)
	}
	if err := t.reindex(key, nil, m); err != nil {
		return key, err
	}
	count(q, m, 1)
	return key, t.putQueue(q)
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
	cur, key, err := t.lookup(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	return t.transition(key, cur, p.To, p.Update, p.History)
}

// transition moves a message read as cur to status to, after update.
func (t *txn) transition(key uuid.UUID, cur storedMessage, to domain.Status, update func(*domain.Message), h domain.HistoryEntry) (*domain.Message, error) {
	return t.move(key, cur, update, step{to, h})
}

// step is one status change of a move, with its history entry.
type step struct {
	to domain.Status
	h  domain.HistoryEntry
}

// move changes a message read as cur through one or more statuses in one
// write: each step gets its history entry, the message, its indexes and
// its queue's counts are written once, for the last. (Routing moves an
// inbound message TBDL→DLNG→DLVD so in one transaction.)
func (t *txn) move(key uuid.UUID, cur storedMessage, update func(*domain.Message), steps ...step) (*domain.Message, error) {
	to := steps[len(steps)-1].to
	if to == domain.StatusPEND && cur.Status != domain.StatusPEND {
		return nil, domain.Invalidf("message %s: status %s cannot go back to PEND", cur.ID, cur.Status)
	}
	q, err := t.queue(cur.Queue)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", cur.ID, err)
	}
	next := cur.Clone()
	if update != nil {
		update(next)
		if next.ID != cur.ID || next.Queue != cur.Queue || next.Seq != cur.Seq || next.Status != cur.Status {
			return nil, fmt.Errorf("message %s: a transition's Update must not change the id, queue, seq or status", cur.ID)
		}
	}
	storedTimes(next)
	hist := t.bucket(bucketHistory)
	entries := bytes.Clone(hist.Get(key[:]))
	from := cur.Status
	for _, st := range steps {
		h := st.h
		if h.At.IsZero() {
			h.At = t.now()
		}
		h.At = h.At.UTC().Truncate(time.Microsecond)
		h.From, h.To = from, st.to
		if entries, err = appendHistoryEntry(entries, h); err != nil {
			return nil, fmt.Errorf("message %s: encode history: %w", cur.ID, err)
		}
		next.UpdatedAt, from = h.At, st.to
	}
	next.Status, next.History = to, nil
	if cur.Status == domain.StatusPEND && to != domain.StatusPEND {
		q.LastSeq++
		next.Seq = q.LastSeq
	}
	if err := t.putMessage(key, next, cur.sharedPayload); err != nil {
		return nil, err
	}
	if err := hist.Put(key[:], entries); err != nil {
		return nil, fmt.Errorf("message %s: store history: %w", cur.ID, err)
	}
	if err := t.reindex(key, cur.Message, next); err != nil {
		return nil, err
	}
	if cur.Status == next.Status && passedOver(cur.Message) == passedOver(next) && cur.Seq == next.Seq &&
		domain.CountsStuck(cur.Message) == domain.CountsStuck(next) {
		return next, nil
	}
	count(q, cur.Message, -1)
	count(q, next, 1)
	return next, t.putQueue(q)
}

// storedTimes sets m's optional times to what the store keeps of them:
// UTC, to the microsecond, so that the message a write returns equals the
// one a read finds.
func storedTimes(m *domain.Message) {
	for _, p := range []**time.Time{&m.NextAttemptAt, &m.LastCheckAt} {
		if *p != nil {
			at := (*p).UTC().Truncate(time.Microsecond)
			*p = &at
		}
	}
}

// Delete removes a message and everything kept about it.
func (t *txn) Delete(id string) error {
	m, key, err := t.lookup(id)
	if err != nil {
		return err
	}
	q, err := t.queue(m.Queue)
	if err != nil {
		return fmt.Errorf("message %s: %w", id, err)
	}
	if err := t.reindex(key, m.Message, nil); err != nil {
		return err
	}
	if err := t.bucket(bucketHistory).Delete(key[:]); err != nil {
		return fmt.Errorf("message %s: delete history: %w", id, err)
	}
	if err := t.addPayloadRefs(m.payloadKey(key), -1); err != nil {
		return fmt.Errorf("message %s: %w", id, err)
	}
	if err := t.bucket(bucketMessages).Delete(key[:]); err != nil {
		return fmt.Errorf("message %s: delete: %w", id, err)
	}
	if m.Key != "" {
		if err := t.bucket(bucketKeys).Delete(keyOf(m.Key, m.Sender)); err != nil {
			return fmt.Errorf("message %s: delete its key: %w", id, err)
		}
	}
	if m.InboundQueue != "" {
		// The inbound queue it passed through counts it no more.
		if in, err := t.queue(m.InboundQueue); err == nil {
			store.CountPassedThrough(in, -1)
			if err := t.putQueue(in); err != nil {
				return err
			}
		} else if !errors.Is(err, domain.ErrNotFound) {
			return fmt.Errorf("message %s: %w", id, err)
		}
	}
	count(q, m.Message, -1)
	return t.putQueue(q)
}

// addPayloadRefs adds n to the number of messages that share the payload
// under key, and deletes the payload with its last message. The count is
// stored only while it is above one: a payload with no entry belongs to one
// message.
func (t *txn) addPayloadRefs(key uuid.UUID, n int) error {
	refs := t.bucket(bucketPayloadRefs)
	count := 1
	if v := refs.Get(key[:]); v != nil {
		c, k := binary.Uvarint(v)
		if k <= 0 {
			return fmt.Errorf("payload %s: unreadable reference count", key)
		}
		count = int(c)
	}
	count += n
	switch {
	case count <= 0:
		if err := refs.Delete(key[:]); err != nil {
			return err
		}
		return t.bucket(bucketPayloads).Delete(key[:])
	case count == 1:
		return refs.Delete(key[:])
	}
	return refs.Put(key[:], binary.AppendUvarint(nil, uint64(count)))
}

func (t *txn) putMessage(key uuid.UUID, m *domain.Message, shared bool) error {
	v, err := encodeMessage(m, shared)
	if err != nil {
		return fmt.Errorf("message %s: encode: %w", m.ID, err)
	}
	if err := t.bucket(bucketMessages).Put(key[:], v); err != nil {
		return fmt.Errorf("message %s: store: %w", m.ID, err)
	}
	return nil
}

// open reports whether a message in status s still takes part in its
// queue's delivery: it is in the queue_open index.
func open(s domain.Status) bool {
	return s != domain.StatusPEND && !s.Final()
}

// indexEntry is one key a message has in an index bucket.
type indexEntry struct {
	bucket string
	key    []byte
	value  []byte
}

// indexEntries lists the index keys of m: its status; its place in its
// queue, among the open messages (and those of its app queue, in a queue
// app queues share), among the TBDL ones; its next attempt while it WAITs;
// its wait for a check-back while it is PEND and not stuck.
func indexEntries(key uuid.UUID, m *domain.Message) []indexEntry {
	if m == nil {
		return nil
	}
	out := []indexEntry{{bucketStatus, statusKey(m.Status, key), nil}}
	if m.Seq > 0 {
		sk := seqKey(m.Queue, m.Seq)
		out = append(out, indexEntry{bucketQueueAll, sk, key[:]})
		if open(m.Status) {
			out = append(out, indexEntry{bucketQueueOpen, sk, key[:]})
			if m.AppQueue != "" && domain.SharedQueueName(m.Queue) {
				out = append(out, indexEntry{bucketAppOpen, appKey(m.Queue, m.AppQueue, m.Seq), key[:]})
			}
		}
		if m.Status == domain.StatusTBDL {
			out = append(out, indexEntry{bucketReady, readyKey(m.Stage, m.Queue, m.Seq), key[:]})
		}
	}
	if m.Status == domain.StatusWAIT && m.NextAttemptAt != nil {
		out = append(out, indexEntry{bucketDue, dueKey(m.NextAttemptAt.UnixMicro(), key), nil})
	}
	if m.Status == domain.StatusPEND && !m.Stuck {
		out = append(out, indexEntry{bucketChecks, checkKey(m, key), nil})
	}
	return out
}

// reindex moves a message's index entries from those of prev (nil for a
// new message) to those of next (nil for a deleted one), touching only the
// keys that change.
func (t *txn) reindex(key uuid.UUID, prev, next *domain.Message) error {
	old, cur := indexEntries(key, prev), indexEntries(key, next)
	same := func(a, b indexEntry) bool { return a.bucket == b.bucket && bytes.Equal(a.key, b.key) }
	for _, e := range old {
		if slices.ContainsFunc(cur, func(c indexEntry) bool { return same(c, e) }) {
			continue
		}
		if err := t.bucket(e.bucket).Delete(e.key); err != nil {
			return fmt.Errorf("message %s: unindex %s: %w", key, e.bucket, err)
		}
	}
	for _, e := range cur {
		if slices.ContainsFunc(old, func(o indexEntry) bool { return same(o, e) }) {
			continue
		}
		v := e.value
		if v == nil {
			v = []byte{}
		}
		if err := t.bucket(e.bucket).Put(e.key, v); err != nil {
			return fmt.Errorf("message %s: index %s: %w", key, e.bucket, err)
		}
	}
	return nil
}
