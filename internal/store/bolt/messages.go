package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"

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
		if v := b.Get(keyOf(key, sender)); v != nil {
			id, err := storedID(v, fmt.Sprintf("the entry of key %q of sender %s", key, sender))
			if err != nil {
				return nil, err
			}
			m, err := t.stored(id)
			if err != nil {
				return nil, indexMiss("the entry of key "+strconv.Quote(key), err)
			}
			if m.Key != key || m.Sender != sender {
				return nil, corrupt("the entry of key %q of sender %s names message %s, whose key is %q of sender %s",
					key, sender, m.ID, m.Key, m.Sender)
			}
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
	for _, v := range ids {
		id, err := storedID(v, fmt.Sprintf("an entry of key %q", key))
		if err != nil {
			return err
		}
		m, err := t.stored(id)
		if err != nil {
			return indexMiss("an entry of key "+strconv.Quote(key), err)
		}
		if m.Key != key {
			return corrupt("an entry of key %q names message %s, whose key is %q", key, m.ID, m.Key)
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

// stored reads the message under key. A message the bucket's pages do not
// lead to, though it is there, or whose history or status the store still
// holds, is damage, not a message not found.
func (t *txn) stored(key uuid.UUID) (storedMessage, error) {
	b := t.bucket(bucketMessages)
	v := b.Get(key[:])
	if v == nil {
		if err := t.missing(b, key); err != nil {
			return storedMessage{}, err
		}
		return storedMessage{}, domain.NotFoundf("message %s does not exist", key)
	}
	return decodeMessage(key[:], v, t.legacy)
}

// missing checks that a message the messages bucket b does not hold is
// gone: nothing else the store keeps of a message names it. It costs a few
// lookups, only when a message is not found.
func (t *txn) missing(b *bbolt.Bucket, key uuid.UUID) error {
	if !absentSound(b, key[:]) {
		return corrupt("message %s: the pages of the messages bucket do not lead to its record", key)
	}
	if t.bucket(bucketHistory).Get(key[:]) != nil {
		return corrupt("message %s: its record is missing, its history is there", key)
	}
	idx := t.bucket(bucketStatus)
	for _, s := range storedStatuses {
		if idx.Get(indexKey(s, key, t.oldOrder)) != nil {
			return corrupt("message %s: its record is missing, the status index lists it as %s", key, s)
		}
	}
	return nil
}

// indexMiss is the error of an index entry (what) that names a message
// that cannot be read: damage, whether the message is missing or its
// record is damaged.
func indexMiss(what string, err error) error {
	if errors.Is(err, errRecord) {
		return err
	}
	return corrupt("%s names a missing message: %v", what, err)
}

// Payload returns a copy of the message's payload.
func (t *txn) Payload(id string) ([]byte, error) {
	m, key, err := t.lookup(id)
	if err != nil {
		return nil, err
	}
	return t.payload(m, key)
}

// payload returns a copy of the payload of a message read as m, checked
// against its seal and the size its record gives.
func (t *txn) payload(m storedMessage, key uuid.UUID) ([]byte, error) {
	pk := m.payloadKey(key)
	v := t.bucket(bucketPayloads).Get(pk[:])
	if v == nil {
		if m.Size == 0 {
			return []byte{}, nil
		}
		return nil, corrupt("message %s: its payload (%d bytes) is missing", m.ID, m.Size)
	}
	body := v
	if !m.legacyPayload || !t.legacy {
		var ok bool
		if body, ok = unseal(pk[:], v); !ok {
			return nil, corrupt("message %s: its payload does not match its checksum", m.ID)
		}
	}
	if int64(len(body)) != m.Size {
		return nil, corrupt("message %s: its payload is %d bytes, its record says %d", m.ID, len(body), m.Size)
	}
	return bytes.Clone(body), nil
}

// History returns the message's status changes, oldest first.
func (t *txn) History(id string) ([]domain.HistoryEntry, error) {
	m, key, err := t.lookup(id)
	if err != nil {
		return nil, err
	}
	entries := m.history
	if entries == nil {
		if entries, err = historyEntries(key[:], t.bucket(bucketHistory).Get(key[:]), t.legacy); err != nil {
			return nil, err
		}
	}
	h, err := decodeHistory(entries)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", id, err)
	}
	return h, nil
}

// historyOf returns a copy of the encoded entries of the history of a
// message read as cur, checked, with room for a few more.
func (t *txn) historyOf(key uuid.UUID, cur storedMessage) ([]byte, error) {
	entries := cur.history
	if entries == nil {
		var err error
		if entries, err = historyEntries(key[:], t.bucket(bucketHistory).Get(key[:]), t.legacy); err != nil {
			return nil, err
		}
	}
	return append(make([]byte, 0, len(entries)+128), entries...), nil
}

// putWithHistory stores a message read as cur, now next, with its history
// entries after its record; a history the history bucket held (layout
// version 2) leaves it.
func (t *txn) putWithHistory(key uuid.UUID, cur storedMessage, next *domain.Message, entries []byte) error {
	f := cur.form
	f.history = entries
	if err := t.putMessage(key, next, f); err != nil {
		return err
	}
	if cur.history == nil {
		if err := t.bucket(bucketHistory).Delete(key[:]); err != nil {
			return fmt.Errorf("message %s: delete its old history: %w", key, err)
		}
	}
	return nil
}

// Insert stores a new message with its own payload. It sets m.Size and m.Seq
// (and CreatedAt and UpdatedAt when they are zero) on the caller's value as
// they are stored.
func (t *txn) Insert(m *domain.Message, payload []byte, h domain.HistoryEntry) error {
	m.Size = int64(len(payload))
	key, err := t.insert(m, h, false, false)
	if err != nil || len(payload) == 0 {
		return err
	}
	// bbolt keeps a reference to a value until commit: the payload is
	// copied, sealed, so the caller may reuse its buffer.
	v := seal(key[:], append(make([]byte, 0, len(payload)+sumSize), payload...))
	if err := t.bucket(bucketPayloads).Put(key[:], v); err != nil {
		return fmt.Errorf("message %s: store payload: %w", m.ID, err)
	}
	return nil
}

// insertShared stores a routed outbound message that shares its parent's
// payload (m.ParentID, m.Size set by the caller); the caller counts the
// references (addPayloadRefs), once for all of a parent's messages.
// legacyPayload says the parent's payload is unsealed.
func (t *txn) insertShared(m *domain.Message, h domain.HistoryEntry, legacyPayload bool) error {
	_, err := t.insert(m, h, true, legacyPayload)
	return err
}

// insert stores a new message record, its first history entry, its index
// entries and counts.
func (t *txn) insert(m *domain.Message, h domain.HistoryEntry, shared, legacyPayload bool) (uuid.UUID, error) {
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
	entry, err := appendHistoryEntry(nil, h) // a new message has no history yet
	if err != nil {
		return key, fmt.Errorf("message %s: encode history: %w", m.ID, err)
	}
	if err := t.putMessage(key, m, form{shared: shared, legacyPayload: legacyPayload, history: entry}); err != nil {
		return key, err
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
	entries, err := t.historyOf(key, cur)
	if err != nil {
		return nil, err
	}
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
	if err := t.putWithHistory(key, cur, next, entries); err != nil {
		return nil, err
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
	if err := t.deleteVersions(key); err != nil {
		return fmt.Errorf("message %s: delete its payload versions: %w", id, err)
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
			if err := t.addPassed(in.Name, -1); err != nil {
				return err
			}
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
		body, ok := sealedRefs(key[:], v, t.legacy)
		c, k := binary.Uvarint(body)
		if !ok || k <= 0 || k != len(body) {
			return corrupt("payload %s: its reference count is damaged", key)
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
	return refs.Put(key[:], seal(key[:], binary.AppendUvarint(nil, uint64(count))))
}

// sealedRefs returns the uvarint of a reference count: sealed (five bytes
// or more), or (legacy) as layout version 2 stored it, unsealed: fewer
// than five bytes for any count below 2^28.
func sealedRefs(key, v []byte, legacy bool) ([]byte, bool) {
	if len(v) < 1+sumSize {
		return v, legacy
	}
	return unseal(key, v)
}

// putMessage stores a message's record, in form f (encodeMessage).
func (t *txn) putMessage(key uuid.UUID, m *domain.Message, f form) error {
	v, err := encodeMessage(key, m, f)
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
	out := make([]indexEntry, 1, 6)
	out[0] = indexEntry{bucketStatus, statusKey(m.Status, key), nil}
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
