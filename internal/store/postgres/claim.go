package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Claim routes ready inbound messages and claims ready outbound messages
// in one transaction, in the queues whose lease the node holds.
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) (*store.ClaimResult, error) {
	var out *store.ClaimResult
	var next turns
	err := s.engine(ctx, func(t *txn) error {
		var err error
		out, next, err = t.claim(p, s.claims.Load(), true, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.claims.Store(next)
	return out, nil
}

// turns is store.Turns: where the next claim starts.
type turns = store.Turns

// lease is a lease the claiming node holds, on a queue with work.
type lease struct {
	epoch uint64
	stage domain.Stage
}

// claimer is the state of one claim.
type claimer struct {
	t   *txn
	p   store.ClaimParams
	now time.Time
	res *store.ClaimResult
	// held are the node's leases of queues with work, by queue.
	held map[string]lease
	// routed and claimed count what the claim did, against the limits.
	routed, claimed int
	// last is, per stage, the last queue the claim served.
	last turns
	// waited says an inbound message waited for messages of its lane
	// ahead of it (§10), which routing later in the claim may have moved on.
	waited bool
	// ahead is the outbound claim read with the leases, if it was.
	ahead *outboundReads
}

// heldSQL lists the leases incarnation $1 holds on queues with work, or
// that this transaction changed ($2), whose messages the claim may start
// (its receivers $3), and locks them FOR SHARE until commit: no node takes
// them over, and their holder gives none of them up, while the claim and
// its outcomes are under way.
var heldSQL = `SELECT l.queue, l.epoch, q.stage FROM leases l JOIN queues q ON q.name = l.queue
	WHERE l.incarnation = $1 AND l.expires_at > now() AND NOT l.releasing AND NOT q.stopped
		AND (q.n_tbdl > 0 OR q.n_wait > 0 OR q.name = ANY($2)) AND ` + deliversSQL("$3") + `
	ORDER BY l.queue FOR SHARE OF l`

// claim routes, then claims due WAIT messages, then TBDL messages,
// visiting the held queues from the turn's start on. It returns where the
// next claim's turn starts. fence checks first that the node is alive;
// pre, if set, holds writes of the caller that travel with the claim's
// first statements.
func (t *txn) claim(p store.ClaimParams, start turns, fence bool, pre *pgx.Batch) (*store.ClaimResult, turns, error) {
	c := t.claimer(p)
	b := pre
	if b == nil {
		b = &pgx.Batch{}
	}
	// The claim ahead reads the queues' rows: they must hold what this
	// transaction changed.
	t.queueFlush(b)
	done := c.queueLeases(b, fence)
	c.queueAhead(b, start[domain.Outbound], nil)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, nil, fmt.Errorf("claim: leases: %w", err)
	}
	if err := done(); err != nil {
		return nil, nil, err
	}
	return c.finish(start)
}

// claimer starts a claim.
func (t *txn) claimer(p store.ClaimParams) *claimer {
	c := &claimer{t: t, p: p, res: &store.ClaimResult{}, last: turns{}}
	if c.p.Window <= 0 {
		c.p.Window = 1
	}
	return c
}

// finish goes on with a claim whose leases were read: it routes, then
// claims — with what the leases' round trip claimed ahead when routing
// changed nothing.
func (c *claimer) finish(start turns) (*store.ClaimResult, turns, error) {
	t, p := c.t, c.p
	c.now = t.clock
	c.res.Now = c.now
	if p.Router != nil && p.RouteLimit > 0 && c.routes() {
		for _, name := range c.order(domain.Inbound, start[domain.Inbound]) {
			if c.full(domain.Inbound) {
				c.res.More = true
				break
			}
			if err := c.routeQueue(name); err != nil {
				return nil, nil, err
			}
		}
		c.res.More = c.res.More || (c.waited && c.routed > 0)
		if c.routed > 0 {
			// What routing made ready — in new queues too — is
			// claimed at once.
			if err := c.leases(); err != nil {
				return nil, nil, err
			}
		}
	}
	if p.Limit > 0 {
		var err error
		if c.ahead != nil && c.routed == 0 {
			err = c.take(c.ahead)
		} else {
			err = c.outbound(start[domain.Outbound])
		}
		if err != nil {
			return nil, nil, err
		}
	}
	next := maps.Clone(start)
	if next == nil {
		next = turns{}
	}
	maps.Copy(next, c.last)
	return c.res, next, nil
}

// leases takes free leases up to the node's share and reads the held ones,
// in a round trip of its own.
func (c *claimer) leases() error {
	b := &pgx.Batch{}
	done := c.queueLeases(b, false)
	if err := c.t.tx.SendBatch(c.t.ctx, b).Close(); err != nil {
		return fmt.Errorf("claim: leases: %w", err)
	}
	return done()
}

// queueLeases queues on b the statements of leases — after a check that the
// node is alive, if fence — and the read of the EOIO switch state, and
// returns what to call once b ran.
func (c *claimer) queueLeases(b *pgx.Batch, fence bool) func() error {
	inc := int64(c.p.Node.Incarnation)
	c.t.queueNow(b)
	var check func() error
	if fence {
		check = queueFence(b, c.p.Node)
	}
	queueAdopt(b, inc, clean(c.p.Node.ID))
	held := map[string]lease{}
	b.Queue(heldSQL, inc, slices.Collect(maps.Keys(c.t.queues)), c.p.Receivers).Query(func(rows pgx.Rows) error {
		var name string
		var l lease
		_, err := pgx.ForEachRow(rows, []any{&name, &l.epoch, &l.stage}, func() error {
			held[name] = l
			return nil
		})
		return err
	})
	c.t.queueEOIO(b)
	return func() error {
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		c.held = held
		return nil
	}
}

// routes says whether a held inbound queue may have something to route.
func (c *claimer) routes() bool {
	for _, l := range c.held {
		if l.stage == domain.Inbound {
			return true
		}
	}
	return false
}

// order returns the held queues of a stage, from the first after start on,
// and round.
func (c *claimer) order(stage domain.Stage, start string) []string {
	var names []string
	for name, l := range c.held {
		if l.stage == stage {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	i, _ := slices.BinarySearch(names, start)
	if i < len(names) && names[i] == start {
		i++ // the queue served last goes last
	}
	return append(names[i:], names[:i]...)
}

// full reports whether the claim reached its limit for a stage, or claimed
// its one candidate.
func (c *claimer) full(s domain.Stage) bool {
	if s == domain.Inbound {
		return c.routed >= c.p.RouteLimit
	}
	return c.claimed >= c.p.Limit || (c.p.Candidates == store.CandidatesAlone && c.claimed > 0)
}

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

// outboundReads are what an outbound claim read: the queues it locked
// (those another transaction holds are skipped), the due WAIT messages and
// the TBDL heads it may start, locked FOR UPDATE SKIP LOCKED, the heads in
// the order of the turn, and when the next WAIT message is due.
type outboundReads struct {
	// locked are the EOIO queues the claim locked, read the EO queues.
	locked, read []*store.QueueRecord
	due, heads   []*storedMessage
	nextDue      pgtype.Timestamptz
	most         int
}

// heldOutbound lists the held outbound queues of heldSQL ($1, $2, $4 the
// receivers) with their place in the turn that starts after queue $3.
var heldOutbound = `SELECT l.queue AS name, row_number() OVER (ORDER BY l.queue COLLATE "C" <= $3, l.queue COLLATE "C") AS ord
	FROM leases l JOIN queues q ON q.name = l.queue
	WHERE l.incarnation = $1 AND l.expires_at > now() AND NOT l.releasing AND NOT q.stopped AND q.stage = 'outbound'
		AND (q.n_tbdl > 0 OR q.n_wait > 0 OR q.name = ANY($2)) AND ` + deliversSQL("$4")

// queueAhead claims ahead, after the statements of queueLeases: it queues
// on b the reads of an outbound claim, which find the held queues
// themselves (in the turn that starts after queue start), so that a claim
// that routes nothing costs two round trips, the leases' and the marks'.
// The heads' room counts the messages of freeing that the node has DLNG as
// free: the outcomes recorded with the claim free them.
func (c *claimer) queueAhead(b *pgx.Batch, start string, freeing []pgtype.UUID) {
	if c.p.Limit <= 0 {
		return
	}
	changed := slices.Collect(maps.Keys(c.t.queues))
	r := &outboundReads{}
	inc := int64(c.p.Node.Incarnation)
	held := `SELECT name FROM (` + heldOutbound + `) h`
	r.most = c.queueReads(b, r, `q.name IN (`+held+`)`, []any{inc, changed, start, c.p.Receivers})
	if freeing == nil {
		freeing = []pgtype.UUID{}
	}
	b.Queue(`SELECT m.* FROM (`+heldOutbound+`) u JOIN queues q ON q.name = u.name
		CROSS JOIN LATERAL (`+headsSQL(roomSQL("$5", `(SELECT count(*) FROM messages f WHERE f.id = ANY($6)
			AND f.queue = q.name AND f.status = 'DLNG' AND f.incarnation = $1)`))+`) m
		WHERE `+startsSQL+`
		ORDER BY u.ord, m.seq
		LIMIT $7`, inc, changed, start, c.p.Receivers, c.p.Window, freeing, r.most+1).Query(r.collect(&r.heads))
	c.ahead = r
}

// queueReads queues on b the statements of an outbound claim but the heads':
// the locks of the queues that queues selects (a condition on q, with args),
// their due WAIT messages and the next due time. It returns how many heads
// the claim may read.
func (c *claimer) queueReads(b *pgx.Batch, r *outboundReads, queues string, args []any) int {
	n := len(args)
	left := c.p.Limit - c.claimed
	// EOIO queues are locked, those another transaction holds skipped; EO
	// queues are read (§14: no hot row on the EO path).
	queuesOf := func(into *[]*store.QueueRecord) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var err error
			*into, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.QueueRecord, error) { return scanQueue(row) })
			return err
		}
	}
	b.Queue(queueSelect+` WHERE `+queues+` AND q.qos = 'EOIO' ORDER BY q.name FOR NO KEY UPDATE OF q SKIP LOCKED`, args...).
		Query(queuesOf(&r.locked))
	b.Queue(queueSelect+` WHERE `+queues+` AND q.qos = 'EO' ORDER BY q.name`, args...).Query(queuesOf(&r.read))
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

// outbound claims due WAIT messages and the TBDL heads of the held
// outbound queues, in two round trips: one locks the queues and selects
// what may start in each — one statement for the heads of all queues —,
// the other marks the chosen DLNG and reads their payloads.
func (c *claimer) outbound(start string) error {
	t := c.t
	names := c.order(domain.Outbound, start)
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
	for locked, qs := range map[bool][]*store.QueueRecord{true: r.locked, false: r.read} {
		for _, q := range qs {
			if _, ok := c.held[q.Name]; !ok {
				c.res.More = true
				continue
			}
			mine[q.Name] = true
			t.keep(q, locked)
		}
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
