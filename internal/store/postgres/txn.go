package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// pageSize is how many rows a walk reads per query. Walks read page by page
// (keyset paging), so that memory does not grow with the rows walked and the
// walk function may run statements of its own between pages: a connection
// runs one statement at a time.
const pageSize = 256

// txn is the Reader and Writer of one transaction.
//
// In a writable transaction every change an operator makes to a queue or
// its messages, and every read of a queue (Queue, Head, QueueMessages) or
// of a message, first locks the queue's row (FOR NO KEY UPDATE), and so do
// the engine's changes to an EOIO queue, which keep its order. The
// engine's changes to an EO queue take no lock of its row (§14: no hot row
// on the EO path): they are compare-and-sets on the rows of the messages,
// and its sequence numbers come from a sequence of their own (eoSeq). The
// transaction keeps the records of the queues it touched: the counters and
// the last sequence number change in memory and reach the row once, at
// commit (or before a walk of all queues reads the rows), as deltas — so
// that transactions that change one queue at once, locked or not, add up.
type txn struct {
	ctx      context.Context
	tx       querier
	writable bool
	// queues holds the records of the queues this transaction read, as
	// the transaction changed them; base holds them as they were read (or
	// last written back), so that the row gets the difference; locked
	// names those whose row the transaction locked; dirty those whose row
	// is behind.
	queues map[string]*store.QueueRecord
	base   map[string]*store.QueueRecord
	locked map[string]bool
	dirty  map[string]bool
	// eo numbers the messages of EO queues (nil in a read-only transaction).
	eo *seqBlock
	// keys are the idempotency keys this transaction stored, by key and
	// sender: their rows are not sent yet.
	keys map[[2]string]string
	// clock is the database's time of the transaction, once read;
	// nowQueued is the batch that reads it, until it ran.
	clock     time.Time
	nowQueued *pgx.Batch
	// params holds the tuning values this transaction read or wrote:
	// placement reads them for every message it sends; paramsRead says
	// it read them all.
	params     map[[2]string]param
	paramsRead bool
	// eoio is the EOIO switch state, once read.
	eoio *domain.EOIOSwitch
	// wake says the transaction made messages ready for delivery (or a
	// queue free to take): its commit notifies the nodes (wakeChannel).
	wake bool
	// pend holds the writes to messages, history and payloads not sent
	// yet: they go out set-based with the next statement (bufTx).
	pend pending
	// codes is the store's cache of receiver codes; newCodes those this
	// transaction gave, which are not committed yet.
	codes    *codeCache
	newCodes map[string]string
	// routable says the transaction's claim statement found messages
	// left to route in an inbound queue of its node.
	routable bool
}

// param is one tuning value as a transaction knows it.
type param struct {
	value int
	ok    bool
}

var (
	_ store.Reader = (*txn)(nil)
	_ store.Writer = (*txn)(nil)
)

// querier is what a transaction sends its statements through: a pgx.Tx,
// or an engine transaction's pipedTx.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func newTxn(ctx context.Context, tx querier, writable bool) *txn {
	t := &txn{ctx: ctx, tx: tx, writable: writable, queues: map[string]*store.QueueRecord{},
		base: map[string]*store.QueueRecord{}, locked: map[string]bool{}, dirty: map[string]bool{},
		params: map[[2]string]param{}}
	if writable {
		t.tx = &bufTx{q: tx, t: t}
	}
	return t
}

// now returns the database's clock: the start of the transaction, the same
// for every change it makes, and the same on every node of a cluster.
func (t *txn) now() (time.Time, error) {
	if t.clock.IsZero() {
		if err := t.tx.QueryRow(t.ctx, `SELECT now()`).Scan(&t.clock); err != nil {
			return time.Time{}, err
		}
		t.clock = t.clock.UTC()
	}
	return t.clock, nil
}

// queueNow queues on b the read of the database's clock, unless the
// transaction knows it already, so that it costs no round trip of its own.
func (t *txn) queueNow(b *pgx.Batch) {
	if !t.clock.IsZero() || t.nowQueued == b {
		return
	}
	t.nowQueued = b
	b.Queue(`SELECT now()`).QueryRow(func(row pgx.Row) error {
		var at time.Time
		if err := row.Scan(&at); err != nil {
			return err
		}
		if t.clock.IsZero() {
			t.clock = at.UTC()
		}
		return nil
	})
}

// queueColumns are the columns of a queue record with the epoch of its
// lease and its owner (the node of the lease while it has not expired),
// from queueFrom, in the order scanQueue reads them.
const (
	queueColumns = `q.name, q.qos, q.stage, coalesce(q.receiver, ''), q.stopped, q.last_seq,
	q.n_pend, q.n_tbdl, q.n_dlng, q.n_wait, q.n_hold, q.n_ndlv, q.n_dlvd, q.n_fail, q.passed_over, q.n_stuck,
	q.created_at, coalesce(l.epoch, 0), CASE WHEN l.expires_at > now() THEN l.node ELSE '' END`
	queueFrom   = ` FROM queues q LEFT JOIN leases l ON l.queue = q.name`
	queueSelect = `SELECT ` + queueColumns + queueFrom
)

// scanQueue reads one row of queueSelect, and into extra the columns a
// query adds after them.
func scanQueue(row pgx.Row, extra ...any) (*store.QueueRecord, error) {
	var q store.QueueRecord
	var n [8]int64
	err := row.Scan(append([]any{&q.Name, &q.QoS, &q.Stage, &q.Receiver, &q.Stopped, &q.LastSeq,
		&n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &q.PassedOver, &q.Stuck, &q.CreatedAt, &q.Epoch, &q.Owner}, extra...)...)
	if err != nil {
		return nil, err
	}
	q.CreatedAt = q.CreatedAt.UTC()
	q.Counts = map[domain.Status]int64{}
	for i, s := range []domain.Status{domain.StatusPEND, domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT,
		domain.StatusHOLD, domain.StatusNDLV, domain.StatusDLVD, domain.StatusFAIL} {
		if n[i] != 0 {
			q.Counts[s] = n[i]
		}
	}
	return &q, nil
}

// keep makes q, a queue's row as just read, the transaction's record of the
// queue, unless it has one — which is ahead of the row — and notes whether
// the transaction holds the row's lock.
func (t *txn) keep(q *store.QueueRecord, locked bool) *store.QueueRecord {
	if locked {
		t.locked[q.Name] = true
	}
	if own, ok := t.queues[q.Name]; ok {
		return own
	}
	t.queues[q.Name] = q
	t.base[q.Name] = cloneQueue(q)
	return q
}

// lockQueue returns the transaction's record of a queue, having locked the
// row of an EOIO queue for the rest of the transaction; one that does not
// exist is not found.
//
// The row of an EO queue is locked by no transaction but for the moment of
// its last statement, the one that adds to its counters (flush): no
// transaction waits for it while holding the locks of messages, which the
// engine's transactions take first (§14: no hot row on the EO path). A
// transaction locks an EOIO queue's row before its messages, an EO queue's
// after them.
func (t *txn) lockQueue(name string) (*store.QueueRecord, error) {
	if q, ok := t.queues[name]; ok {
		return q, nil
	}
	b := &pgx.Batch{}
	var found *store.QueueRecord
	t.queueQueues(b, `q.name = $1`, []any{name}, func(q *store.QueueRecord) { found = q })
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("queue %s: %w", name, err)
	}
	if found == nil {
		return nil, domain.NotFoundf("queue %s does not exist", name)
	}
	return found, nil
}

// LockQueues locks ahead, in name order and one round trip, the queues
// named and those of the messages ids that the transaction has not read
// yet (store.QueueLocker): EOIO queues FOR NO KEY UPDATE, EO queues read,
// as lockQueue does. A send batch or a bulk action that then reads and
// changes them one by one takes no lock out of that order.
func (t *txn) LockQueues(names, ids []string) error {
	uids := []pgtype.UUID{}
	for _, id := range ids {
		if u, ok := parseID(id); ok {
			uids = append(uids, u)
		}
	}
	known := append([]string{}, slices.Collect(maps.Keys(t.queues))...)
	b := &pgx.Batch{}
	t.queueQueues(b, `(q.name = ANY($1) OR q.name IN (SELECT m.queue FROM messages m WHERE m.id = ANY($2)))
		AND NOT q.name = ANY($3)`, []any{append([]string{}, names...), uids, known}, nil)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("lock queues: %w", err)
	}
	return nil
}

var _ store.QueueLocker = (*txn)(nil)

// queueQueues queues on b the read of the queues where cond holds (a
// condition on q, with args) — EOIO queues locked (FOR NO KEY UPDATE) in
// name order, EO queues read (lockQueue) — with the database's clock, and
// keeps their records; got, if set, hears each as the transaction keeps it.
func (t *txn) queueQueues(b *pgx.Batch, cond string, args []any, got func(*store.QueueRecord)) {
	for _, lock := range []bool{true, false} {
		sql := `SELECT ` + queueColumns + `, now()` + queueFrom + ` WHERE ` + cond + ` AND q.qos = 'EO'`
		if lock {
			sql = `SELECT ` + queueColumns + `, now()` + queueFrom + ` WHERE ` + cond +
				` AND q.qos = 'EOIO' ORDER BY q.name FOR NO KEY UPDATE OF q`
		}
		b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var clock time.Time
				q, err := scanQueue(rows, &clock)
				if err != nil {
					return err
				}
				if t.clock.IsZero() {
					t.clock = clock.UTC()
				}
				q = t.keep(q, lock)
				if got != nil {
					got(q)
				}
			}
			return rows.Err()
		})
	}
}

// nextSeq gives a message that joins q (the transaction's record) its
// sequence number: an EO queue's from eoSeq, an EOIO queue's the next of
// its own, under the queue's lock.
func (t *txn) nextSeq(q *store.QueueRecord) (uint64, error) {
	if q.QoS != domain.EO {
		q.LastSeq++
		return q.LastSeq, nil
	}
	seq, err := t.eo.next(t)
	if err != nil {
		return 0, err
	}
	q.LastSeq = max(q.LastSeq, seq)
	return seq, nil
}

// ready notes that m, as stored now, may be ready for delivery.
func (t *txn) ready(m *domain.Message) {
	if m.Status == domain.StatusTBDL {
		t.wake = true
	}
}

// count adds n to the counters of q that m counts in: its status and, if
// it is passed over, PassedOver; the row follows at flush.
func (t *txn) count(q *store.QueueRecord, m *domain.Message, n int64) {
	q.Counts[m.Status] += n
	if q.Counts[m.Status] == 0 {
		delete(q.Counts, m.Status)
	}
	if domain.PassedOver(m.QoS, m.Status, m.ErrorClass) {
		q.PassedOver += n
	}
	if domain.CountsStuck(m) {
		q.Stuck += n
	}
	t.dirty[q.Name] = true
}

// flush writes what the transaction held back, and the records of the
// queues it changed to their rows, in name order.
func (t *txn) flush() error {
	if len(t.dirty) == 0 && !t.wake && t.pend.empty() {
		return nil
	}
	b := &pgx.Batch{}
	t.queueFlush(b)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("store the queue counters: %w", err)
	}
	return nil
}

// queueFlush queues on b the writes of flush: the rows of the queues this
// transaction changed, and its notification. They count as written: a
// batch that fails fails the transaction.
func (t *txn) queueFlush(b *pgx.Batch) {
	if t.wake {
		// Delivered at commit, once per transaction and schema.
		b.Queue(notifySQL)
		t.wake = false
	}
	names := slices.Sorted(maps.Keys(t.dirty))
	if len(names) == 0 {
		return
	}
	clear(t.dirty)
	// One statement for all of them, in name order: the differences from
	// what the transaction read, so that the writes of transactions that
	// changed one queue at once add up.
	// The rows not locked yet (EO queues') are locked first, in name
	// order, as every transaction does: two transactions that add to the
	// same rows then never wait for each other in turn.
	var unlocked []string
	for _, name := range names {
		if !t.locked[name] {
			unlocked = append(unlocked, name)
			t.locked[name] = true
		}
	}
	if len(unlocked) > 0 {
		b.Queue(`SELECT 1 FROM queues WHERE name = ANY($1) ORDER BY name FOR NO KEY UPDATE`, unlocked)
	}
	n := len(names)
	stopped, last := make([]pgtype.Bool, n), make([]int64, n)
	qos, stage, receiver := make([]string, n), make([]string, n), make([]pgtype.Text, n)
	var counts [8][]int64
	for i := range counts {
		counts[i] = make([]int64, n)
	}
	passed, stuck := make([]int64, n), make([]int64, n)
	for i, name := range names {
		q, was := t.queues[name], t.base[name]
		if q.Stopped != was.Stopped {
			stopped[i] = pgtype.Bool{Bool: q.Stopped, Valid: true}
		}
		qos[i], stage[i], receiver[i] = string(q.QoS), string(q.Stage), optional(q.Receiver)
		last[i], passed[i], stuck[i] = int64(q.LastSeq), q.PassedOver-was.PassedOver, q.Stuck-was.Stuck
		for j, s := range []domain.Status{domain.StatusPEND, domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT,
			domain.StatusHOLD, domain.StatusNDLV, domain.StatusDLVD, domain.StatusFAIL} {
			counts[j][i] = q.Counts[s] - was.Counts[s]
		}
		t.base[name] = cloneQueue(q)
	}
	// An upsert, not an update: a queue deleted while this transaction
	// placed a message in it without its lock (DeleteQueue) is created
	// again, with what this transaction counts in it — the deleted row
	// counted nothing.
	b.Queue(`INSERT INTO queues AS q (name, qos, stage, receiver, stopped, last_seq, n_pend, n_tbdl, n_dlng, n_wait,
			n_hold, n_ndlv, n_dlvd, n_fail, passed_over, n_stuck, created_at)
		SELECT u.name, u.qos, u.stage, u.receiver, coalesce(u.stopped, false), u.last_seq, u.n_pend, u.n_tbdl, u.n_dlng,
			u.n_wait, u.n_hold, u.n_ndlv, u.n_dlvd, u.n_fail, u.passed_over, u.n_stuck, now()
		FROM unnest($1::text[], $2::bool[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], $8::int8[],
			$9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::int8[], $14::text[], $15::text[], $16::text[])
			AS u(name, stopped, last_seq, n_pend, n_tbdl, n_dlng, n_wait, n_hold, n_ndlv, n_dlvd, n_fail, passed_over, n_stuck,
				qos, stage, receiver)
		ORDER BY u.name
		ON CONFLICT (name) DO UPDATE SET last_seq = greatest(q.last_seq, EXCLUDED.last_seq),
			n_pend = q.n_pend + EXCLUDED.n_pend, n_tbdl = q.n_tbdl + EXCLUDED.n_tbdl, n_dlng = q.n_dlng + EXCLUDED.n_dlng,
			n_wait = q.n_wait + EXCLUDED.n_wait, n_hold = q.n_hold + EXCLUDED.n_hold, n_ndlv = q.n_ndlv + EXCLUDED.n_ndlv,
			n_dlvd = q.n_dlvd + EXCLUDED.n_dlvd, n_fail = q.n_fail + EXCLUDED.n_fail,
			passed_over = q.passed_over + EXCLUDED.passed_over, n_stuck = q.n_stuck + EXCLUDED.n_stuck`,
		names, stopped, last, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
		counts[6], counts[7], passed, stuck, qos, stage, receiver)
	if slices.ContainsFunc(stopped, func(v pgtype.Bool) bool { return v.Valid }) {
		// stopped changes only under the row's lock, so it is written as
		// it is, not added to.
		b.Queue(`UPDATE queues q SET stopped = u.stopped FROM unnest($1::text[], $2::bool[]) AS u(name, stopped)
			WHERE q.name = u.name AND u.stopped IS NOT NULL`, names, stopped)
	}
}

// cloneQueue returns a copy of q that the caller may change.
func cloneQueue(q *store.QueueRecord) *store.QueueRecord {
	c := *q
	c.Counts = maps.Clone(q.Counts)
	return &c
}

// stopped turns store.ErrStop, by which a walk function ends the walk, into
// success.
func stopped(err error) error {
	if errors.Is(err, store.ErrStop) {
		return nil
	}
	return err
}

// limiter counts the rows handed out and ends a walk at the limit.
type limiter struct {
	limit, n int
}

// done records one row and reports whether the limit is reached.
func (l *limiter) done() bool {
	l.n++
	return l.limit > 0 && l.n >= l.limit
}

// page returns how many rows the next query of a walk may read.
func (l *limiter) page() int {
	if l.limit > 0 {
		return min(pageSize, l.limit-l.n)
	}
	return pageSize
}
