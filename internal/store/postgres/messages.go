package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Message returns one message, without payload and history.
func (t *txn) Message(id string) (*domain.Message, error) {
	m, err := t.message(id)
	if err != nil {
		return nil, err
	}
	return m.Message, nil
}

// message reads a message; in a writable transaction after locking its
// queue, in the same round trip, so that what it returns stays true until
// commit.
func (t *txn) message(id string) (*storedMessage, error) {
	uid, ok := parseID(id)
	if !ok {
		return nil, notFound(id)
	}
	read := `SELECT ` + messageColumns + ` FROM messages WHERE id = $1`
	if t.writable {
		// The engine changes the messages of an EO queue without the
		// queue's lock: the message's own lock is the compare-and-set's.
		read += ` FOR NO KEY UPDATE`
	}
	if !t.writable {
		m, err := scanMessage(t.tx.QueryRow(t.ctx, read, uid))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, notFound(id)
		}
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", id, err)
		}
		return m, nil
	}
	// The lock of an EOIO queue comes first: the read is a statement of
	// its own, so it sees what the queue's previous holder committed.
	b := &pgx.Batch{}
	var q *store.QueueRecord
	t.queueQueues(b, `q.name = (SELECT queue FROM messages WHERE id = $1)`, []any{uid}, func(r *store.QueueRecord) { q = r })
	var m *storedMessage
	b.Queue(read, uid).QueryRow(func(row pgx.Row) error {
		var err error
		m, err = scanMessage(row)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	// The writes held back go first only when they concern this message:
	// those of others change neither its row nor its queue's, so a run of
	// compare-and-sets sends them set-based at the end.
	via := t.tx
	if x, ok := t.tx.(*bufTx); ok && !t.pend.touches(uid) {
		via = x.q
	}
	if err := via.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("message %s: %w", id, err)
	}
	switch {
	case m == nil:
		return nil, notFound(id)
	case q == nil:
		return nil, fmt.Errorf("message %s: its queue %s has no record", id, m.Queue)
	}
	return m, nil
}

// Payload returns a copy of the message's payload.
func (t *txn) Payload(id string) ([]byte, error) {
	m, err := t.message(id)
	if err != nil {
		return nil, err
	}
	var p []byte
	if err := t.tx.QueryRow(t.ctx, `SELECT data FROM payloads WHERE id = $1`, m.payloadID).Scan(&p); err != nil {
		return nil, fmt.Errorf("message %s: payload: %w", id, err)
	}
	if p == nil {
		p = []byte{}
	}
	return p, nil
}

// History returns the message's status changes, oldest first.
func (t *txn) History(id string) ([]domain.HistoryEntry, error) {
	if _, err := t.message(id); err != nil {
		return nil, err
	}
	uid, _ := parseID(id)
	var b []byte
	if err := t.tx.QueryRow(t.ctx, `SELECT history FROM messages WHERE id = $1`, uid).Scan(&b); err != nil {
		return nil, fmt.Errorf("message %s: history: %w", id, err)
	}
	out, err := DecodeHistory(b)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", id, err)
	}
	return out, nil
}

// Insert stores a new message with its own payload. It sets m.Size and m.Seq
// (and CreatedAt and UpdatedAt when they are zero) on the caller's value as
// they are stored.
func (t *txn) Insert(m *domain.Message, payload []byte, h domain.HistoryEntry) error {
	uid, err := checkNew(m)
	if err != nil {
		return err
	}
	if m.Key != "" {
		if err := t.claimKey(m); err != nil {
			return err
		}
	}
	q, _, err := t.queueFor(m)
	if err != nil {
		return err
	}
	if h.At.IsZero() {
		if h.At, err = t.now(); err != nil {
			return err
		}
	}
	h.From, h.To = "", m.Status
	next := cloneQueue(q)
	m.Size, m.Seq = int64(len(payload)), 0
	if m.Status != domain.StatusPEND {
		if m.Seq, err = t.nextSeq(next); err != nil {
			return err
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = h.At
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	storedTimes(m)
	payloadID, err := uuid.NewV7()
	if err != nil {
		return err
	}
	pid := pgtype.UUID{Bytes: payloadID, Valid: true}
	// The caller may reuse its buffer once Insert returns.
	payload = append([]byte{}, payload...)
	// Held back with the transaction's other writes: a message whose id
	// exists already fails the transaction when they are sent.
	if err := t.pend.insert(uid, m, pid, payload, h); err != nil {
		return err
	}
	if x, ok := t.tx.(*bufTx); ok && t.pend.bytes >= maxHeldBytes {
		if err := x.send(t.ctx); err != nil {
			return fmt.Errorf("message %s: store: %w", m.ID, err)
		}
	}
	t.queues[m.Queue] = next
	t.count(next, m, 1)
	t.ready(m)
	return nil
}

// MessageByKey returns the message sender sent with an idempotency key.
func (t *txn) MessageByKey(sender, key string) (*domain.Message, error) {
	m, err := scanMessage(t.tx.QueryRow(t.ctx, `SELECT `+messageColumns+` FROM messages WHERE key = $1 AND sender = $2`,
		clean(key), clean(sender)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, domain.NotFoundf("sender %s sent no message with the key %q", sender, key)
	}
	if err != nil {
		return nil, fmt.Errorf("message of sender %s with key %q: %w", sender, key, err)
	}
	return m.Message, nil
}

// claimKey refuses the key of m when its sender used it already — in this
// transaction, or in one committed. One committed meanwhile is refused by
// the unique index when the insert is sent, and the transaction runs again
// (retryable).
func (t *txn) claimKey(m *domain.Message) error {
	k := [2]string{m.Key, m.Sender}
	id, ok := t.keys[k]
	if !ok {
		if prior, err := t.MessageByKey(m.Sender, m.Key); err == nil {
			id, ok = prior.ID, true
		} else if !errors.Is(err, domain.ErrNotFound) {
			return err
		}
	}
	if ok {
		return fmt.Errorf("message %s: key %q of sender %s is message %s's: %w", m.ID, m.Key, m.Sender, id, store.ErrKeyExists)
	}
	if t.keys == nil {
		t.keys = map[[2]string]string{}
	}
	t.keys[k] = m.ID
	return nil
}

// checkNew checks what Insert needs of a message and returns its id.
func checkNew(m *domain.Message) (pgtype.UUID, error) {
	uid, ok := parseID(m.ID)
	switch {
	case !ok:
		return uid, domain.Invalidf("message id %q is not a UUID", m.ID)
	case m.Queue == "" || strings.IndexByte(m.Queue, 0) >= 0:
		return uid, domain.Invalidf("message %s: queue name %q is empty or holds a NUL byte", m.ID, m.Queue)
	case m.QoS != domain.EO && m.QoS != domain.EOIO:
		return uid, domain.Invalidf("message %s: qos %q must be EO or EOIO", m.ID, m.QoS)
	case m.Stage != domain.Inbound && m.Stage != domain.Outbound:
		return uid, domain.Invalidf("message %s: stage %q must be inbound or outbound", m.ID, m.Stage)
	case !m.Status.Valid():
		return uid, domain.Invalidf("message %s: status %q is not a status", m.ID, m.Status)
	}
	return uid, nil
}

// queueFor reads the queue of a new message (lockQueue: an EOIO queue, whose
// order the message joins, is locked), creating it on its first message:
// qos and stage come from the message, and an outbound queue delivers to
// the message's receiver. created reports a new queue.
func (t *txn) queueFor(m *domain.Message) (q *store.QueueRecord, created bool, err error) {
	q, err = t.lockQueue(m.Queue)
	if !errors.Is(err, domain.ErrNotFound) {
		return q, false, err
	}
	at, err := t.now()
	if err != nil {
		return nil, false, err
	}
	receiver := ""
	if m.Stage == domain.Outbound {
		receiver = m.Receiver
	}
	// A concurrent first message may create the queue too: the one that
	// comes second waits for the first to commit, then finds it.
	// The queue comes with its lease, free: a node takes it at its next
	// claim or heartbeat (§11), woken by the notification of the commit.
	var made int
	err = t.tx.QueryRow(t.ctx, `WITH q AS (INSERT INTO queues (name, qos, stage, receiver, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING RETURNING name),
		l AS (INSERT INTO leases (queue, node, incarnation, epoch, expires_at)
			SELECT name, '', 0, 0, '-infinity' FROM q ON CONFLICT (queue) DO NOTHING)
		SELECT count(*) FROM q`, m.Queue, m.QoS, m.Stage, optional(receiver), at).Scan(&made)
	if err != nil {
		return nil, false, fmt.Errorf("queue %s: create: %w", m.Queue, err)
	}
	if made == 1 {
		t.wake = true
	}
	q, err = t.lockQueue(m.Queue)
	return q, made == 1, err
}

// Transition changes a message's status by compare-and-set.
func (t *txn) Transition(p store.TransitionParams) (*domain.Message, error) {
	if !p.To.Valid() {
		return nil, domain.Invalidf("message %s: status %q is not a status", p.ID, p.To)
	}
	cur, err := t.message(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	return t.change(cur, p.To, p.Update, p.History)
}

// change holds back (t.pend) the writes of one status change of cur, a
// message read under its queue's lock in this transaction, and counts it in
// the transaction's record of the queue. It returns the message as stored
// once the writes ran.
func (t *txn) change(cur *storedMessage, to domain.Status, update func(*domain.Message), h domain.HistoryEntry) (*domain.Message, error) {
	if to == domain.StatusPEND && cur.Status != domain.StatusPEND {
		return nil, domain.Invalidf("message %s: status %s cannot go back to PEND", cur.ID, cur.Status)
	}
	q := t.queues[cur.Queue]
	next := cur.Clone()
	if update != nil {
		update(next)
		if next.ID != cur.ID || next.Queue != cur.Queue || next.Seq != cur.Seq || next.Status != cur.Status {
			return nil, fmt.Errorf("message %s: a transition's Update must not change the id, queue, seq or status", cur.ID)
		}
	}
	if h.At.IsZero() {
		var err error
		if h.At, err = t.now(); err != nil {
			return nil, err
		}
	}
	h.From, h.To = cur.Status, to
	next.Status, next.UpdatedAt, next.History = to, h.At, nil
	storedTimes(next)
	nq := cloneQueue(q)
	if cur.Status == domain.StatusPEND && to != domain.StatusPEND {
		seq, err := t.nextSeq(nq)
		if err != nil {
			return nil, err
		}
		next.Seq = seq
	}
	uid, _ := parseID(cur.ID)
	t.pend.update(uid, cur.Message, next, h)
	b := &pgx.Batch{}
	queueCheckUpdate(b, uid, cur.Message, next)
	t.pend.raw = append(t.pend.raw, b.QueuedQueries...)
	t.queues[cur.Queue] = nq
	t.count(nq, cur.Message, -1)
	t.count(nq, next, 1)
	t.ready(next)
	return next, nil
}

// Delete removes a message, its history with it, and its payload unless
// other messages still share it.
func (t *txn) Delete(id string) error {
	m, err := t.message(id)
	if err != nil {
		return err
	}
	uid, _ := parseID(id)
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM messages WHERE id = $1`, uid)
	// The decrement waits for a concurrent one (a copy in another queue
	// deleted at once), so the last of them sees zero.
	b.Queue(`UPDATE payloads SET refs = refs - 1 WHERE id = $1`, m.payloadID)
	b.Queue(`DELETE FROM payloads WHERE id = $1 AND refs = 0`, m.payloadID)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("message %s: delete: %w", id, err)
	}
	t.count(t.queues[m.Queue], m.Message, -1)
	if m.InboundQueue != "" {
		// The inbound queue it passed through counts it no more.
		in, err := t.lockQueue(m.InboundQueue)
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("message %s: %w", id, err)
		}
		store.CountPassedThrough(in, -1)
		t.dirty[in.Name] = true
	}
	return nil
}
