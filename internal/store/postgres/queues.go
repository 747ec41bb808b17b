package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The open messages of a queue — those that take part in its delivery
// order: not PEND, DLVD or FAIL — are two runs of indexes in seq order: the
// TBDL ones in messages_ready, the others in messages_started. A TBDL
// message, the most frequent change, so costs one index entry for the
// claims, not two. A query states each predicate as written, for
// PostgreSQL to use the index, and merges the runs (openRuns). The open
// messages of an app queue are one index, messages_app_open.
const (
	openStatuses    = `status IN ('TBDL', 'DLNG', 'WAIT', 'HOLD', 'NDLV')`
	startedStatuses = `status IN ('DLNG', 'WAIT', 'HOLD', 'NDLV')`
)

// openRuns is a query of the open messages that match where, in order, up
// to limit (an SQL expression): the first limit of each run, merged. The
// TBDL run is read in seq order whatever order is: every order a caller
// gives ranks TBDL messages by seq alone.
func openRuns(where, order, limit string) string {
	return `SELECT * FROM ((SELECT ` + messageColumns + ` FROM messages WHERE ` + where + ` AND status = 'TBDL'
			ORDER BY seq LIMIT ` + limit + `)
		UNION ALL (SELECT ` + messageColumns + ` FROM messages WHERE ` + where + ` AND ` + startedStatuses + `
			ORDER BY ` + order + ` LIMIT ` + limit + `)) m
		ORDER BY ` + order + ` LIMIT ` + limit
}

// Queue returns one queue's record; in a writable transaction it locks the
// queue.
func (t *txn) Queue(name string) (*store.QueueRecord, error) {
	if t.writable {
		q, err := t.lockQueue(name)
		if err != nil {
			return nil, err
		}
		return cloneQueue(q), nil
	}
	q, err := scanQueue(t.tx.QueryRow(t.ctx, queueSelect+` WHERE q.name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, domain.NotFoundf("queue %s does not exist", name)
	}
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", name, err)
	}
	return q, nil
}

// Queues calls fn for each queue in name order after the name `after`.
func (t *txn) Queues(after string, fn func(*store.QueueRecord) error) error {
	// The rows are read: they must hold what this transaction changed.
	if err := t.flush(); err != nil {
		return err
	}
	for {
		rows, err := t.tx.Query(t.ctx, queueSelect+` WHERE q.name > $1 ORDER BY q.name LIMIT $2`, after, pageSize)
		if err != nil {
			return fmt.Errorf("list queues: %w", err)
		}
		page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.QueueRecord, error) { return scanQueue(row) })
		if err != nil {
			return fmt.Errorf("list queues: %w", err)
		}
		for _, q := range page {
			if own, ok := t.queues[q.Name]; ok {
				q = cloneQueue(own)
			}
			if err := fn(q); err != nil {
				return stopped(err)
			}
			after = q.Name
		}
		if len(page) < pageSize {
			return nil
		}
	}
}

// SetStopped stops or starts delivery of an existing queue.
func (t *txn) SetStopped(queue string, stopped bool) error {
	q, err := t.lockQueue(queue)
	if err != nil {
		return err
	}
	if !t.locked[queue] {
		// An EO queue's row: stopped is written as it is, not added to,
		// so it is locked for the rest of the transaction, which touches
		// no message of it after.
		if _, err := t.tx.Exec(t.ctx, `SELECT 1 FROM queues WHERE name = $1 FOR NO KEY UPDATE`, queue); err != nil {
			return fmt.Errorf("queue %s: %w", queue, err)
		}
		t.locked[queue] = true
	}
	if q.Stopped != stopped {
		q.Stopped = stopped
		t.dirty[q.Name] = true
		t.wake = t.wake || !stopped
	}
	return nil
}

// QueueMessages calls fn for a queue's messages in seq order after
// p.AfterSeq; with p.Open only the open ones, read from their own index
// (that of an app queue's with p.AppQueue).
func (t *txn) QueueMessages(queue string, p store.QueueMessagesParams, fn func(*domain.Message) error) error {
	if t.writable {
		if _, err := t.lockQueue(queue); errors.Is(err, domain.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	where := `queue = $1 AND seq > $2`
	if p.AppQueue != "" {
		where += ` AND app_queue = $4`
		if p.Open {
			where += ` AND ` + openStatuses // messages_app_open
		}
	}
	query := `SELECT ` + messageColumns + ` FROM messages WHERE ` + where + ` ORDER BY seq LIMIT $3`
	if p.Open && p.AppQueue == "" {
		query = openRuns(where, "seq", "$3")
	}
	after := int64(min(p.AfterSeq, uint64(1)<<63-1))
	lim := limiter{limit: p.Limit}
	for {
		n := lim.page()
		args := []any{queue, after, n}
		if p.AppQueue != "" {
			args = append(args, p.AppQueue)
		}
		page, err := t.messages(query, args...)
		if err != nil {
			return fmt.Errorf("queue %s: %w", queue, err)
		}
		for _, m := range page {
			if err := fn(m); err != nil {
				return stopped(err)
			}
			after = int64(m.Seq)
			if lim.done() {
				return nil
			}
		}
		if len(page) < n {
			return nil
		}
	}
}

// Head returns the first open message of the queue that holds it up: the
// first of the open runs in seq order, passing over what domain.PassedOver
// says has left the queue's order.
func (t *txn) Head(queue string) (*domain.Message, error) {
	q, err := t.Queue(queue) // locks the queue in a writable transaction
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The open message of highest domain.HeadPriority, the first by seq
	// among equals: only an EO queue with a message that blocks or WAITs
	// needs the ranks; any other's head is its first open message.
	order := "seq"
	if q.HeadRank() > 0 {
		order = "CASE status WHEN 'NDLV' THEN 2 WHEN 'WAIT' THEN 1 ELSE 0 END DESC, seq"
	}
	page, err := t.messages(openRuns(`queue = $1 AND NOT passed_over`, order, "1"), queue)
	if err != nil {
		return nil, fmt.Errorf("queue %s: head: %w", queue, err)
	}
	if len(page) == 0 {
		return nil, nil
	}
	return page[0], nil
}

// messages runs a query of messageColumns and returns its rows.
func (t *txn) messages(sql string, args ...any) ([]*domain.Message, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*domain.Message, error) {
		m, err := scanMessage(row)
		if err != nil {
			return nil, err
		}
		return m.Message, nil
	})
}

// DeleteQueue removes an empty queue's row; its lease row stays, so that
// the queue's epoch only grows should it come back.
//
// The rule that makes a delete safe against the writers that add to the
// queue: the delete locks the row FOR UPDATE — it waits for every
// transaction that holds it (an EOIO send, a flush of counters, an
// operator's action) and reads the counters they committed — and deletes
// it only when they count no message. Every committed message is in the
// counters of its queue (they change in its transaction), so a queue
// whose counters are zero holds no committed message. A transaction under
// way that placed a message in the queue without its lock (an EO send,
// §14) adds to the counters at its end with an upsert (queueFlush): the
// row it adds to is re-created if the delete took it meanwhile. So a
// message never stays in a queue without a row, and a delete never takes
// a queue with a message in it.
func (t *txn) DeleteQueue(name string) error {
	if err := t.flush(); err != nil {
		return err
	}
	q, err := scanQueue(t.tx.QueryRow(t.ctx, queueSelect+` WHERE q.name = $1 FOR UPDATE OF q`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.NotFoundf("queue %s does not exist", name)
	}
	if err != nil {
		return fmt.Errorf("queue %s: %w", name, err)
	}
	if own, ok := t.queues[name]; ok && own.Holds() {
		q = own
	}
	if q.Holds() {
		return store.QueueHolds(q)
	}
	if _, err := t.tx.Exec(t.ctx, `DELETE FROM queues WHERE name = $1`, name); err != nil {
		return fmt.Errorf("queue %s: delete: %w", name, err)
	}
	delete(t.queues, name)
	delete(t.base, name)
	delete(t.dirty, name)
	delete(t.locked, name)
	return nil
}
