package postgres

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// routeQueue routes what it may of one inbound queue's TBDL messages, in seq
// order: an EO queue's up to the limit, an EOIO queue's until one of them
// finds no receiver and blocks it.
func (c *claimer) routeQueue(name string) error {
	left := c.p.RouteLimit - c.routed
	ready, err := c.readyInbound(name, left+1)
	if err != nil {
		return fmt.Errorf("route queue %s: %w", name, err)
	}
	if len(ready) > left {
		ready, c.res.More = ready[:left], true // the limit cuts the queue short
	}
	moved := false
	for _, m := range ready {
		if moved {
			// A failed message took its lane to the error queue (§10):
			// what follows may have gone with it.
			if m, err = c.t.message(m.ID); errors.Is(err, domain.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			if m.Queue != name || m.Status != domain.StatusTBDL {
				continue
			}
		}
		if wait, err := store.LaneWaits(c.t, m.Message); wait || err != nil {
			c.waited = true
			return err // the queue is serial: its later messages wait too
		}
		after, err := c.route(m)
		if err != nil {
			return err
		}
		c.routed++
		c.last[domain.Inbound] = name
		if after.Queue == name && domain.Blocks(after.QoS, after.Status, after.ErrorClass) {
			return nil
		}
		moved = moved || after.Queue != name
	}
	return nil
}

// readyInbound reads an inbound queue's first TBDL messages, up to limit,
// unless the queue routes nothing now: it is gone, stopped, blocked, or waits
// for a retry. An EOIO queue is locked first, as every change of its order
// is; an EO queue is not (§14: no hot row on the EO path) — its messages
// are locked instead, leaving those another transaction routes. A queue the
// transaction has not read yet is read in one round trip with its messages:
// the read of the messages, a statement of its own after the lock, sees
// what the queue's previous holder committed, and states the queue's
// conditions on the row just read.
func (c *claimer) readyInbound(name string, limit int) ([]*storedMessage, error) {
	t := c.t
	routes := func(q *store.QueueRecord) bool {
		return q.Starts() && q.Counts[domain.StatusTBDL] > 0
	}
	collect := func(into *[]*storedMessage) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*into, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*storedMessage, error) { return scanMessage(row) })
			return err
		}
	}
	// EOIO: in order, under the queue's lock. EO: any, each locked.
	const (
		readEOIO = `SELECT ` + messageColumns + ` FROM messages WHERE queue = $1 AND status = 'TBDL' ORDER BY seq LIMIT $2`
		readEO   = readEOIO + ` FOR UPDATE SKIP LOCKED`
	)
	var ready []*storedMessage
	if q, ok := t.queues[name]; ok {
		if !routes(q) {
			return nil, nil
		}
		read := readEOIO
		if q.QoS == domain.EO {
			read = readEO
		}
		rows, err := t.tx.Query(t.ctx, read, name, limit)
		if err != nil {
			return nil, err
		}
		err = collect(&ready)(rows)
		return ready, err
	}
	b := &pgx.Batch{}
	var q *store.QueueRecord
	var clock time.Time
	locked := false
	row := func(lock bool) func(pgx.Row) error {
		return func(row pgx.Row) error {
			r, err := scanQueue(row, &clock)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			q, locked = r, lock
			return err
		}
	}
	b.Queue(`SELECT `+queueColumns+`, now()`+queueFrom+` WHERE q.name = $1 AND q.qos = 'EOIO' FOR NO KEY UPDATE OF q`, name).
		QueryRow(row(true))
	b.Queue(`SELECT `+queueColumns+`, now()`+queueFrom+` WHERE q.name = $1 AND q.qos = 'EO'`, name).QueryRow(row(false))
	const routing = ` AND EXISTS (SELECT 1 FROM queues q WHERE q.name = $1 AND q.qos = '%s' AND ` + startsSQL + ` AND q.n_tbdl > 0)`
	b.Queue(strings.Replace(readEOIO, ` ORDER BY`, fmt.Sprintf(routing, domain.EOIO)+` ORDER BY`, 1), name, limit).
		Query(collect(&ready))
	var readyEO []*storedMessage
	b.Queue(strings.Replace(readEO, ` ORDER BY`, fmt.Sprintf(routing, domain.EO)+` ORDER BY`, 1), name, limit).
		Query(collect(&readyEO))
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, err
	}
	if q == nil {
		return nil, nil
	}
	q = t.keep(q, locked)
	if t.clock.IsZero() {
		t.clock = clock.UTC()
	}
	if !routes(q) {
		return nil, nil
	}
	return append(ready, readyEO...), nil
}

// route does receiver determination for one inbound message (§3) in the
// claim's transaction.
func (c *claimer) route(in *storedMessage) (*domain.Message, error) {
	res, err := c.t.route(in, c.p.Router, store.EngineEntry(c.now, c.p.Node, ""))
	if err != nil {
		return nil, err
	}
	c.res.Routed = append(c.res.Routed, res.Message)
	c.res.Created = append(c.res.Created, res.Created...)
	return res.Message, nil
}

// insertShared holds back the insert of a routed outbound message that
// shares the payload of the message it was routed from; the caller adds
// the reference. Its queue is locked (created on first use) first.
func (t *txn) insertShared(m *domain.Message, payload pgtype.UUID, h domain.HistoryEntry) error {
	uid, err := checkNew(m)
	if err != nil {
		return err
	}
	q, _, err := t.queueFor(m)
	if err != nil {
		return err
	}
	h.From, h.To = "", m.Status
	next := cloneQueue(q)
	if m.Seq, err = t.nextSeq(next); err != nil {
		return err
	}
	storedTimes(m)
	h.At = storedTime(h.At)
	if err := t.pend.insert(uid, m, payload, nil, h); err != nil {
		return err
	}
	t.queues[m.Queue] = next
	t.count(next, m, 1)
	t.ready(m)
	return nil
}
