package postgres

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// outboundReads are what an outbound claim read: the queues it locked
// (those another transaction holds are skipped), the due WAIT messages and
// the TBDL heads it may start, locked FOR UPDATE SKIP LOCKED, the heads in
// the order of the turn, and when the next WAIT message is due.
type outboundReads struct {
	// locked are the EOIO queues the claim locked, read the EO queues
	// (locked too).
	locked, read []*store.QueueRecord
	due, heads   []*storedMessage
	nextDue      pgtype.Timestamptz
	most         int
}

// queueReads queues on b the statements of an outbound claim but the heads':
// the locks of the queues that queues selects (a condition on q, with args),
// their due WAIT messages and the next due time. It returns how many heads
// the claim may read.
func (c *claimer) queueReads(b *pgx.Batch, r *outboundReads, queues string, args []any) int {
	n := len(args)
	left := c.p.Limit - c.claimed
	// The queues are locked, those another transaction holds skipped: an
	// EO queue's window, too, is counted on its row as locked, so that two
	// claims of one node never fill it twice.
	queuesOf := func(into *[]*store.QueueRecord) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*into, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.QueueRecord, error) { return scanQueue(row) })
			return err
		}
	}
	b.Queue(queueSelect+` WHERE `+queues+` AND q.qos = 'EOIO' ORDER BY q.name FOR NO KEY UPDATE OF q SKIP LOCKED`, args...).
		Query(queuesOf(&r.locked))
	b.Queue(queueSelect+` WHERE `+queues+` AND q.qos = 'EO' ORDER BY q.name FOR NO KEY UPDATE OF q SKIP LOCKED`, args...).
		Query(queuesOf(&r.read))
	// The due WAIT messages, up to each queue's room: a queue that is
	// stopped or blocked starts none, so a backlog of retries behind a
	// blocked queue never fills the claim's limit and starves the retries
	// of queues that may go on.
	b.Queue(`SELECT m.* FROM queues q CROSS JOIN LATERAL (SELECT `+messageColumns+` FROM messages m
			WHERE m.status = 'WAIT' AND m.queue = q.name AND m.next_attempt_at <= now()
			ORDER BY m.next_attempt_at, m.id LIMIT `+roomSQL(fmt.Sprintf("$%d", n+1), "0")+`
			FOR UPDATE SKIP LOCKED) m
		WHERE q.stage = 'outbound' AND q.n_wait > 0 AND `+queues+`
		ORDER BY m.next_attempt_at, m.id LIMIT $`+fmt.Sprint(n+2),
		append(args, c.p.Window, left+1)...).Query(r.collect(&r.due))
	// The next due time is each queue's first in messages_due, so that a
	// claim costs the same with a backlog of retries as without.
	b.Queue(`SELECT min(d.at) FROM queues q CROSS JOIN LATERAL (SELECT next_attempt_at AS at FROM messages m
			WHERE m.status = 'WAIT' AND m.queue = q.name AND m.next_attempt_at > now()
			ORDER BY m.next_attempt_at LIMIT 1) d
		WHERE q.n_wait > 0 AND `+queues,
		args...).QueryRow(func(row pgx.Row) error { return row.Scan(&r.nextDue) })
	// The heads: per queue, in turn, its first TBDL messages up to its
	// room. A queue that WAITs or is blocked starts nothing.
	most := left + 64
	if c.p.Candidates == store.CandidatesAlone {
		most = 1 << 20
	}
	return most
}

func (r *outboundReads) collect(into *[]*storedMessage) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var err error
		*into, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*storedMessage, error) { return scanMessage(row) })
		return err
	}
}

// lanes claims due WAIT messages and the TBDL heads of the held outbound
// queues names, in Go: a blacklist candidate alone, and the EOIO queues
// whose order follows a switch (store.LaneWaits). Two round trips: one
// locks the queues and selects what may start in each — one statement for
// the heads of all queues —, the other marks the chosen DLNG and reads
// their payloads.
func (c *claimer) lanes(start string, names []string) error {
	t := c.t
	if len(names) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	// The rows must hold what this transaction changed: the heads'
	// statement reads them.
	t.queueFlush(b)
	r := &outboundReads{}
	r.most = c.queueReads(b, r, `q.name = ANY($1)`, []any{names})
	b.Queue(`SELECT m.* FROM unnest($1::text[]) WITH ORDINALITY AS u(name, ord)
		JOIN queues q ON q.name = u.name
		CROSS JOIN LATERAL (`+headsSQL(roomSQL("$2", "0"))+`) m
		WHERE `+startsSQL+`
		ORDER BY u.ord, m.seq
		LIMIT $3`, names, c.p.Window, r.most+1).Query(r.collect(&r.heads))
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return c.take(r)
}

// take chooses from what an outbound claim read — due WAIT messages first,
// then the heads queue by queue in turn — and marks the chosen DLNG.
func (c *claimer) take(r *outboundReads) error {
	t := c.t
	if r.nextDue.Valid {
		c.res.NextDue = r.nextDue.Time.UTC()
	}
	// A queue is the claim's when the leases' read locked its lease and,
	// for an EOIO queue, it locked the queue's row. Each statement reads
	// what was committed when it began: a queue that got work between the
	// leases' read and the claim's reads has no lease locked, nor an epoch
	// to claim under — the next claim takes it.
	mine := map[string]bool{}
	for _, q := range append(r.locked, r.read...) {
		if _, ok := c.held[q.Name]; !ok {
			c.res.More = true
			continue
		}
		mine[q.Name] = true
		t.keep(q, true)
	}
	m := &marker{c: c}
	due, heads := r.due, r.heads
	left := c.p.Limit - c.claimed
	if len(due) > left {
		due, c.res.More = due[:left], true
	}
	for _, d := range due {
		if c.full(domain.Outbound) {
			c.res.More = true
			break
		}
		if !mine[d.Queue] || t.queues[d.Queue].Room(c.p.Window)-m.taken[d.Queue] <= 0 {
			continue
		}
		if err := m.take(d); err != nil {
			return err
		}
	}
	// Only the heads of the queues the claim locked count: those of a
	// queue another transaction holds are nothing more to claim now, or
	// the claim would come back at once, to find them held again.
	heads = slices.DeleteFunc(heads, func(h *storedMessage) bool { return !mine[h.Queue] })
	if len(heads) > r.most {
		heads, c.res.More = heads[:r.most], true
	}
	var names []string
	byQueue := map[string][]*storedMessage{}
	for _, h := range heads {
		if byQueue[h.Queue] == nil {
			names = append(names, h.Queue)
		}
		byQueue[h.Queue] = append(byQueue[h.Queue], h)
	}
	for _, name := range names {
		if !mine[name] {
			continue
		}
		for _, h := range byQueue[name] {
			if c.full(domain.Outbound) {
				c.res.More = true
				break
			}
			if err := m.take(h); err != nil {
				return err
			}
			if h.QoS == domain.EOIO {
				break
			}
		}
	}
	return m.mark()
}

// marker collects the messages a claim takes and marks them DLNG in one
// round trip.
type marker struct {
	c     *claimer
	taken map[string]int64
	msgs  []*storedMessage
}

// take chooses one ready outbound message, minding blacklist candidates
// and the order of its lane across a switch and its error queue (§10).
func (m *marker) take(msg *storedMessage) error {
	c := m.c
	if wait, err := store.LaneWaits(c.t, msg.Message); wait || err != nil {
		return err
	}
	candidate := msg.Crashes > 0 && c.p.Candidates != store.CandidatesAsAny
	switch {
	case candidate && c.p.Candidates == store.CandidatesSkip:
		c.res.Candidates++
		return nil
	case !candidate && c.p.Candidates == store.CandidatesAlone:
		return nil
	}
	if m.taken == nil {
		m.taken = map[string]int64{}
	}
	m.taken[msg.Queue]++
	m.msgs = append(m.msgs, msg)
	c.claimed++
	c.last[domain.Outbound] = msg.Queue
	return nil
}

// mark makes the chosen messages DLNG for the node, with their history
// entries, and reads their payloads: one batch.
func (m *marker) mark() error {
	if len(m.msgs) == 0 {
		return nil
	}
	c, t := m.c, m.c.t
	node := c.p.Node
	ids := make([]pgtype.UUID, len(m.msgs))
	entries := make([][]byte, len(m.msgs))
	payloadIDs := make([]pgtype.UUID, len(m.msgs))
	after := make([]*domain.Message, len(m.msgs))
	for i, cur := range m.msgs {
		ids[i], _ = parseID(cur.ID)
		payloadIDs[i] = cur.payloadID
		next := cur.Clone()
		next.Attempts++
		next.Node, next.Incarnation, next.NextAttemptAt = node.ID, node.Incarnation, nil
		next.Status, next.UpdatedAt, next.History = domain.StatusDLNG, c.now, nil
		storedTimes(next)
		after[i] = next
		h := store.EngineEntry(c.now, node, fmt.Sprintf("delivery attempt %d", next.Attempts))
		h.From, h.To = cur.Status, domain.StatusDLNG
		entries[i] = appendHistory(nil, h)
		q := t.queues[cur.Queue]
		t.count(q, cur.Message, -1)
		t.count(q, next, 1)
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE messages m SET status = 'DLNG', attempts = m.attempts + 1, node = $2, incarnation = $3,
		next_attempt_at = NULL, updated_at = $4, passed_over = false, history = m.history || u.h
		FROM unnest($1::uuid[], $5::bytea[]) AS u(id, h) WHERE m.id = u.id`,
		ids, clean(node.ID), int64(node.Incarnation), c.now, entries)
	// The claim is the transaction's last change: the marks go out with
	// its commit, and the result is complete once they ran.
	b.Queue(`SELECT id, data FROM payloads WHERE id = ANY($1)`, payloadIDs).Query(func(rows pgx.Rows) error {
		payloads := map[uuid.UUID][]byte{}
		var id pgtype.UUID
		var data []byte
		_, err := pgx.ForEachRow(rows, []any{&id, &data}, func() error {
			payloads[id.Bytes] = data
			return nil
		})
		if err != nil {
			return err
		}
		for i, cur := range m.msgs {
			p := payloads[cur.payloadID.Bytes]
			if p == nil {
				p = []byte{}
			}
			c.res.Claimed = append(c.res.Claimed, store.Claimed{Message: after[i], Epoch: c.held[cur.Queue].epoch, Payload: p})
		}
		return nil
	})
	if err := t.deferWrites(b); err != nil {
		return fmt.Errorf("claim: mark DLNG: %w", err)
	}
	return nil
}
