package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
)

// pending holds the writes of a transaction to messages, history and
// payloads that nothing in the transaction has read back yet. They reach
// the database set-based — one statement per kind, whatever their number
// (drain) — before the transaction's next statement or with its commit:
// sending 1,000 messages, or routing a claim's worth, costs a handful of
// statements, not several per message. Two changes of one message in a
// row (routing's TBDL → DLNG → DLVD) write its row once.
//
// The transaction already holds the lock of every affected queue (the
// writes are decided under it), so holding the writes back changes
// neither what other transactions see nor the lock order: messages, then
// payloads, before the commit.
type pending struct {
	inserts []newMessage
	// ids are the messages inserted, to refuse one inserted twice, with
	// where each is in inserts.
	ids map[[16]byte]int
	// updates are the messages changed, as they are now, in the order of
	// their first change; at says where each is in updates.
	updates []changed
	at      map[[16]byte]int
	// refs are the references to add to payloads, by payload.
	refs map[[16]byte]int64
	// raw are statements sent as they are, after the others.
	raw []*pgx.QueuedQuery
	// bytes counts the payload bytes held (maxHeldBytes).
	bytes int
}

// maxHeldBytes bounds the payload bytes a transaction holds back: an
// Insert that reaches it sends what is held at once, so that sending many
// large messages in one transaction does not hold them all in memory.
const maxHeldBytes = 4 << 20

// newMessage is a message to insert; payload is its own payload, or nil
// when it shares the payload of the message it was routed from; history is
// its first history entry, encoded (appendHistory).
type newMessage struct {
	m         *domain.Message
	payloadID pgtype.UUID
	payload   []byte
	history   []byte
}

// changed is a message to update. wide says a change touched a column
// other than those a status change sets (narrowColumns): its whole row is
// written. history holds the encoded entries of its changes, in order,
// which the update appends to the row's.
type changed struct {
	m       *domain.Message
	wide    bool
	history []byte
}

func (p *pending) empty() bool {
	return len(p.inserts) == 0 && len(p.updates) == 0 && len(p.refs) == 0 && len(p.raw) == 0
}

// touches reports whether a write held back concerns the message.
func (p *pending) touches(id pgtype.UUID) bool {
	_, changed := p.at[id.Bytes]
	_, inserted := p.ids[id.Bytes]
	return changed || inserted
}

// insert holds back the insert of a new message with its first history
// entry. A message inserted twice by one transaction is a conflict at once;
// one that exists already fails the transaction when the insert runs.
func (p *pending) insert(uid pgtype.UUID, m *domain.Message, payloadID pgtype.UUID, payload []byte, h domain.HistoryEntry) error {
	if p.ids == nil {
		p.ids = map[[16]byte]int{}
	}
	if _, ok := p.ids[uid.Bytes]; ok {
		return domain.Conflictf("message %s exists already", m.ID)
	}
	p.ids[uid.Bytes] = len(p.inserts)
	p.inserts = append(p.inserts, newMessage{m: m.Clone(), payloadID: payloadID, payload: payload,
		history: appendHistory(nil, h)})
	p.bytes += len(payload)
	return nil
}

// inserted returns the message id as this transaction inserted it, while
// its insert is held back (a send that routes what it stores reads it so,
// without a round trip); nil when it holds back no insert of it.
func (p *pending) inserted(id string) (*storedMessage, error) {
	uid, ok := parseID(id)
	if !ok {
		return nil, notFound(id)
	}
	i, ok := p.ids[uid.Bytes]
	if !ok {
		return nil, nil
	}
	n := p.inserts[i]
	return &storedMessage{Message: n.m.Clone(), payloadID: n.payloadID}, nil
}

// update holds back the change of cur (as stored) into next, with its
// history entry.
func (p *pending) update(uid pgtype.UUID, cur, next *domain.Message, h domain.HistoryEntry) {
	if i, ok := p.ids[uid.Bytes]; ok {
		// Inserted by this transaction and not sent yet (a send that
		// routes what it stores): the insert writes it as it is now.
		n := &p.inserts[i]
		n.m, n.history = next.Clone(), appendHistory(n.history, h)
		return
	}
	if p.at == nil {
		p.at = map[[16]byte]int{}
	}
	wide := !sameWide(cur, next)
	i, ok := p.at[uid.Bytes]
	if !ok {
		i = len(p.updates)
		p.at[uid.Bytes] = i
		p.updates = append(p.updates, changed{})
	}
	c := &p.updates[i]
	c.m, c.wide, c.history = next.Clone(), c.wide || wide, appendHistory(c.history, h)
}

// addRefs holds back n more references to a payload.
func (p *pending) addRefs(payload pgtype.UUID, n int64) {
	if p.refs == nil {
		p.refs = map[[16]byte]int64{}
	}
	p.refs[payload.Bytes] += n
}

// sameWide reports whether a and b agree on every column a narrow update
// leaves alone.
func sameWide(a, b *domain.Message) bool {
	return a.Size == b.Size && a.ParentID == b.ParentID && a.CreatedAt.Equal(b.CreatedAt) && a.QoS == b.QoS &&
		a.Sender == b.Sender && slices.Equal(a.Receivers, b.Receivers) &&
		a.Interface == b.Interface && a.AppQueue == b.AppQueue && maps.Equal(a.Headers, b.Headers)
}

// drain queues on b the writes held back, one statement per kind, in the
// order inserts, updates, payloads, and forgets them. A message inserted
// and changed by the transaction gets its first history entry with the
// insert and the others with the update that follows it.
func (p *pending) drain(b *pgx.Batch) error {
	if p.empty() {
		return nil
	}
	if err := p.queueInserts(b); err != nil {
		return err
	}
	if err := p.queueUpdates(b); err != nil {
		return err
	}
	p.queueRefs(b)
	b.QueuedQueries = append(b.QueuedQueries, p.raw...)
	*p = pending{}
	return nil
}

// insertMessages inserts the messages of the arrays $1..$29 (the columns
// of messageValues with queue and payload_id, receivers and headers as
// JSON, the encoded history, key and inbound queue) and returns the first
// one that existed already, if any: a count of the rows inserted says
// whether one did, so that a batch costs O(messages); only then is it
// looked for.
const insertMessages = `WITH u AS (SELECT * FROM unnest($1::uuid[], $2::int8[], $3::int8[], $4::uuid[], $5::int8[],
		$6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::int8[], $10::int8[], $11::bool[], $12::bool[],
		$13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[],
		$21::text[], $22::text[], $23::text[], $24::text[], $25::text[], $26::uuid[], $27::bytea[], $28::text[], $29::text[])
		AS u(id, seq, size, parent_id, incarnation, created_at, updated_at, next_attempt_at, attempts, crashes,
			blacklisted, passed_over, status, qos, stage, sender, receiver, receivers, interface, app_queue, error,
			error_class, node, headers, queue, payload_id, history, key, inbound_queue)),
	m AS (INSERT INTO messages (id, seq, size, parent_id, incarnation, created_at, updated_at, next_attempt_at,
			attempts, crashes, blacklisted, passed_over, status, qos, stage, sender, receiver, receivers, interface,
			app_queue, error, error_class, node, headers, queue, payload_id, history, key, inbound_queue)
		SELECT id, seq, size, parent_id, incarnation, created_at, updated_at, next_attempt_at, attempts, crashes,
			blacklisted, passed_over, status, qos, stage, sender, receiver,
			CASE WHEN receivers IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(receivers::jsonb)) END,
			interface, app_queue, error, error_class, node, headers::jsonb, queue, payload_id, history, key, inbound_queue
		FROM u ON CONFLICT (id) DO NOTHING RETURNING id)
	SELECT CASE WHEN (SELECT count(*) FROM m) = cardinality($1::uuid[]) THEN NULL
		ELSE (SELECT u.id FROM u WHERE NOT EXISTS (SELECT 1 FROM m WHERE m.id = u.id) LIMIT 1) END`

func (p *pending) queueInserts(b *pgx.Batch) error {
	n := len(p.inserts)
	if n == 0 {
		return nil
	}
	var (
		ids, parents, payloadIDs                            = make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n)
		seqs, incs                                          = make([]pgtype.Int8, n), make([]pgtype.Int8, n)
		sizes, attempts, crashes                            = make([]int64, n), make([]int64, n), make([]int64, n)
		created, updated                                    = make([]time.Time, n), make([]time.Time, n)
		next                                                = make([]pgtype.Timestamptz, n)
		blacklisted, passed                                 = make([]bool, n), make([]bool, n)
		status, qos, stage, sender, queue                   = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		receiver, receivers, iface, appQueue, errs, classes = make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
		nodes, hdrs, keys, inbound                          = make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
		histories                                           = make([][]byte, n)
		ownIDs                                              []pgtype.UUID
		ownData                                             [][]byte
	)
	for i, r := range p.inserts {
		m := r.m
		ids[i], _ = parseID(m.ID)
		parents[i], _ = parseID(m.ParentID)
		payloadIDs[i] = r.payloadID
		histories[i] = r.history
		seqs[i], incs[i] = nullInt(m.Seq), nullInt(m.Incarnation)
		sizes[i], attempts[i], crashes[i] = m.Size, int64(m.Attempts), int64(m.Crashes)
		created[i], updated[i], next[i] = m.CreatedAt, m.UpdatedAt, nullTime(m.NextAttemptAt)
		blacklisted[i], passed[i] = m.Blacklisted, domain.PassedOver(m.QoS, m.Status, m.ErrorClass)
		status[i], qos[i], stage[i], sender[i], queue[i] = string(m.Status), string(m.QoS), string(m.Stage), clean(m.Sender), m.Queue
		receiver[i], iface[i], appQueue[i] = optional(m.Receiver), optional(m.Interface), optional(m.AppQueue)
		errs[i], classes[i], nodes[i] = optional(m.Error), optional(string(m.ErrorClass)), optional(m.Node)
		keys[i], inbound[i] = optional(m.Key), optional(m.InboundQueue)
		var err error
		if receivers[i], err = jsonText(names(m.Receivers)); err != nil {
			return err
		}
		if hdrs[i], err = jsonText(headers(m.Headers)); err != nil {
			return err
		}
		if r.payload != nil {
			ownIDs, ownData = append(ownIDs, r.payloadID), append(ownData, r.payload)
		}
	}
	b.Queue(insertMessages, ids, seqs, sizes, parents, incs, created, updated, next, attempts, crashes, blacklisted,
		passed, status, qos, stage, sender, receiver, receivers, iface, appQueue, errs, classes, nodes, hdrs, queue,
		payloadIDs, histories, keys, inbound).Query(func(rows pgx.Rows) error {
		var dup pgtype.UUID
		_, err := pgx.ForEachRow(rows, []any{&dup}, func() error { return nil })
		if err != nil {
			return fmt.Errorf("store messages: %w", err)
		}
		if dup.Valid {
			return domain.Conflictf("message %s exists already", pgUUIDString(dup))
		}
		return nil
	})
	if len(ownIDs) > 0 {
		b.Queue(`INSERT INTO payloads (id, refs, data) SELECT id, 1, data FROM unnest($1::uuid[], $2::bytea[]) AS u(id, data)`,
			ownIDs, ownData)
	}
	return nil
}

// updateNarrow sets, for the messages of the arrays, the columns a status
// change sets, and appends to their history.
const updateNarrow = `UPDATE messages m SET seq = u.seq, incarnation = u.incarnation, updated_at = u.updated_at,
		next_attempt_at = u.next_attempt_at, attempts = u.attempts, crashes = u.crashes, blacklisted = u.blacklisted,
		passed_over = u.passed_over, status = u.status, error = u.error, error_class = u.error_class, node = u.node,
		queue = u.queue, stage = u.stage, receiver = u.receiver, inbound_queue = u.inbound_queue,
		history = m.history || u.history
	FROM unnest($1::uuid[], $2::int8[], $3::int8[], $4::timestamptz[], $5::timestamptz[], $6::int8[], $7::int8[],
		$8::bool[], $9::bool[], $10::text[], $11::text[], $12::text[], $13::text[], $14::bytea[], $15::text[],
		$16::text[], $17::text[], $18::text[])
		AS u(id, seq, incarnation, updated_at, next_attempt_at, attempts, crashes, blacklisted, passed_over, status,
			error, error_class, node, history, queue, stage, receiver, inbound_queue)
	WHERE m.id = u.id`

func (p *pending) queueUpdates(b *pgx.Batch) error {
	var narrow []changed
	for _, c := range p.updates {
		if c.wide {
			uid, _ := parseID(c.m.ID)
			b.Queue(updateMessage, append(append([]any{uid}, messageValues(c.m)...), c.history)...)
			continue
		}
		narrow = append(narrow, c)
	}
	n := len(narrow)
	if n == 0 {
		return nil
	}
	ids := make([]pgtype.UUID, n)
	seqs, incs := make([]pgtype.Int8, n), make([]pgtype.Int8, n)
	updated, next := make([]time.Time, n), make([]pgtype.Timestamptz, n)
	attempts, crashes := make([]int64, n), make([]int64, n)
	blacklisted, passed := make([]bool, n), make([]bool, n)
	status := make([]string, n)
	errs, classes, nodes := make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
	histories := make([][]byte, n)
	queues, stages := make([]string, n), make([]string, n)
	receivers, inbound := make([]pgtype.Text, n), make([]pgtype.Text, n)
	for i, c := range narrow {
		m := c.m
		ids[i], _ = parseID(m.ID)
		histories[i] = c.history
		seqs[i], incs[i] = nullInt(m.Seq), nullInt(m.Incarnation)
		updated[i], next[i] = m.UpdatedAt, nullTime(m.NextAttemptAt)
		attempts[i], crashes[i] = int64(m.Attempts), int64(m.Crashes)
		blacklisted[i], passed[i] = m.Blacklisted, domain.PassedOver(m.QoS, m.Status, m.ErrorClass)
		status[i] = string(m.Status)
		errs[i], classes[i], nodes[i] = optional(m.Error), optional(string(m.ErrorClass)), optional(m.Node)
		queues[i], stages[i] = m.Queue, string(m.Stage)
		receivers[i], inbound[i] = optional(m.Receiver), optional(m.InboundQueue)
	}
	b.Queue(updateNarrow, ids, seqs, incs, updated, next, attempts, crashes, blacklisted, passed, status, errs, classes, nodes,
		histories, queues, stages, receivers, inbound)
	return nil
}

func (p *pending) queueRefs(b *pgx.Batch) {
	if len(p.refs) == 0 {
		return
	}
	// In payload order, so that two transactions take the rows' locks in
	// the same order.
	keys := slices.SortedFunc(maps.Keys(p.refs), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	ids, n := make([]pgtype.UUID, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		ids[i], n[i] = pgtype.UUID{Bytes: k, Valid: true}, p.refs[k]
	}
	b.Queue(`UPDATE payloads p SET refs = p.refs + u.n FROM unnest($1::uuid[], $2::int8[]) AS u(id, n) WHERE p.id = u.id`, ids, n)
}

func nullInt(v uint64) pgtype.Int8 {
	return pgtype.Int8{Int64: int64(v), Valid: v > 0}
}

func nullTime(t *time.Time) pgtype.Timestamptz {
	if t == nil {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: *t, Valid: true}
}

// jsonText is v as JSON, or NULL for nil.
func jsonText(v any) (pgtype.Text, error) {
	switch x := v.(type) {
	case nil:
		return pgtype.Text{}, nil
	case []string:
		if x == nil {
			return pgtype.Text{}, nil
		}
	case map[string]string:
		if x == nil {
			return pgtype.Text{}, nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return pgtype.Text{}, err
	}
	return pgtype.Text{String: string(data), Valid: true}, nil
}

func pgUUIDString(u pgtype.UUID) string {
	v, _ := u.Value()
	s, _ := v.(string)
	return s
}

// bufTx is the querier of a writable transaction: before each statement
// it sends the writes the transaction held back (pending), with the
// statement where it can.
type bufTx struct {
	q querier
	t *txn
}

// held returns the writes held back as a batch, or nil when there are none.
func (x *bufTx) held() (*pgx.Batch, error) {
	if x.t.pend.empty() {
		return nil, nil
	}
	b := &pgx.Batch{}
	if err := x.t.pend.drain(b); err != nil {
		return nil, err
	}
	return b, nil
}

// send sends the writes held back now, in a round trip of their own.
func (x *bufTx) send(ctx context.Context) error {
	b, err := x.held()
	if b == nil || err != nil {
		return err
	}
	return x.q.SendBatch(ctx, b).Close()
}

// before sends the writes held back ahead of a statement: with it, in an
// engine transaction; in a round trip of their own otherwise.
func (x *bufTx) before(ctx context.Context) error {
	b, err := x.held()
	if b == nil || err != nil {
		return err
	}
	if p, ok := x.q.(*pipedTx); ok {
		p.Defer(b)
		return nil
	}
	return x.q.SendBatch(ctx, b).Close()
}

func (x *bufTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := x.before(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return x.q.Exec(ctx, sql, args...)
}

func (x *bufTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := x.before(ctx); err != nil {
		return nil, err
	}
	return x.q.Query(ctx, sql, args...)
}

func (x *bufTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := x.before(ctx); err != nil {
		return errRow{err}
	}
	return x.q.QueryRow(ctx, sql, args...)
}

func (x *bufTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	h, err := x.held()
	if err != nil {
		return errBatch{err}
	}
	if h != nil {
		h.QueuedQueries = append(h.QueuedQueries, b.QueuedQueries...)
		b = h
	}
	return x.q.SendBatch(ctx, b)
}

// direct returns the querier of a statement that reads nothing of what the
// transaction holds back (t.pend), which it need not send first.
func (t *txn) direct() querier {
	if x, ok := t.tx.(*bufTx); ok {
		return x.q
	}
	return t.tx
}

// errBatch is a batch that failed before it was sent.
type errBatch struct{ err error }

func (e errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, e.err }
func (e errBatch) Query() (pgx.Rows, error)         { return nil, e.err }
func (e errBatch) QueryRow() pgx.Row                { return errRow(e) }
func (e errBatch) Close() error                     { return e.err }
func (e errBatch) Tx() pgx.Tx                       { return nil }
