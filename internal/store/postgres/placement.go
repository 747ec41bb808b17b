package postgres

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/store"
)

// Placement (§11): which live node holds which queue's lease.
//
// A node may hold an inbound queue, and an outbound queue only when it has
// the queue's receiver configured (the receivers of its nodes row, which
// it publishes when it joins): a node that cannot deliver a queue never
// holds it, so a queue whose receiver only some nodes have goes to one of
// them, and a queue whose receiver no live node has stays free, its
// messages TBDL, until a node that has it joins.
//
// Fair shares are weighted by who may hold what: each queue counts 1/k
// towards the share of each of the k live nodes that may hold it, and a
// node's share is the sum, rounded up — ceil(queues / live nodes) when
// every node has the same receivers, as before receivers were published.
// The shares of all the live nodes add up to at least the number of
// queues they may hold, so every such queue fits in some node's share; but
// a node that took queues others could hold may leave a node below its
// share that cannot hold the queue still free. So: a node takes the
// scarcest queues first (those fewest live nodes may hold); it takes a
// free queue with work beyond its share when no other live node that may
// hold it is below its share (hungry); and it hands over its surplus only
// where a hungry node may take it.

// busy is the condition on a row of queues (q) that the queue has work:
// open messages (TBDL, DLNG, WAIT, HOLD, NDLV).
const busy = `(q.n_tbdl + q.n_dlng + q.n_wait + q.n_hold + q.n_ndlv > 0)`

// mayHold is the condition that a node whose receivers are the text[]
// expression r may hold the lease of the queue (or group of queues) of row
// q: an inbound queue, or an outbound queue of one of its receivers. A node
// that published no receivers (NULL: a version before them) claims for
// every receiver, and may hold any queue.
func mayHold(r, q string) string {
	return `(` + q + `.stage = 'inbound' OR ` + r + ` IS NULL OR ` + q + `.receiver = ANY(` + r + `))`
}

// mine is the receivers of incarnation $1, for mayHold: an array value
// (the cast keeps ANY from reading it as a subquery of rows).
const mine = `(SELECT m.receivers FROM nodes m WHERE m.incarnation = $1)::text[]`

// scarcity orders the queues of rows q by how many live nodes may hold
// them, fewest first.
var scarcity = `(SELECT count(*) FROM nodes n WHERE ` + alive + ` AND ` + mayHold("n.receivers", "q") + `)`

// sharesCTE are the common table expressions of the shares: the live nodes,
// the queues grouped by stage and receiver with how many live nodes may hold
// each group (k), and each live node's weighted shares of all queues and of
// the queues with work (shares).
var sharesCTE = `live AS (SELECT n.incarnation, n.receivers FROM nodes n WHERE ` + alive + `),
	groups AS (SELECT q.stage, q.receiver, count(*) AS n_all, count(*) FILTER (WHERE ` + busy + `) AS n_busy
		FROM leases l JOIN queues q ON q.name = l.queue GROUP BY q.stage, q.receiver),
	reach AS (SELECT g.*, (SELECT count(*) FROM live n WHERE ` + mayHold("n.receivers", "g") + `) AS k FROM groups g),
	shares AS (SELECT n.incarnation, n.receivers, ceil(sum(g.n_all::numeric / g.k))::bigint AS share,
			ceil(sum(g.n_busy::numeric / g.k))::bigint AS busy_share
		FROM live n JOIN reach g ON ` + mayHold("n.receivers", "g") + ` GROUP BY n.incarnation, n.receivers)`

// hungryCTE adds to sharesCTE the live nodes below their share of the
// queues with work (hungry), with their receivers.
var hungryCTE = sharesCTE + `,
	holding AS (SELECT l.incarnation, count(*) AS held_busy FROM leases l JOIN queues q ON q.name = l.queue
		WHERE l.expires_at > now() AND ` + busy + ` GROUP BY l.incarnation),
	hungry AS (SELECT s.incarnation, s.receivers FROM shares s LEFT JOIN holding h ON h.incarnation = s.incarnation
		WHERE coalesce(h.held_busy, 0) < s.busy_share)`

// othersHungry is the condition that a live node other than incarnation $1
// that may hold the queue of row q is below its share (hungryCTE).
var othersHungry = `EXISTS (SELECT 1 FROM hungry h WHERE h.incarnation <> $1 AND ` + mayHold("h.receivers", "q") + `)`

// shareSQL computes, for incarnation $1, the fair shares of all queues and
// of the queues with work, how many of each it holds, and how many of those
// it holds it is handing over (releasing).
var shareSQL = `WITH ` + sharesCTE + `,
	held AS (SELECT count(*) AS held,
			count(*) FILTER (WHERE ` + busy + `) AS held_busy,
			count(*) FILTER (WHERE l.releasing) AS releasing
		FROM leases l JOIN queues q ON q.name = l.queue WHERE l.incarnation = $1 AND l.expires_at > now())
	SELECT coalesce(s.share, 0), coalesce(s.busy_share, 0), h.held, h.held_busy, h.releasing
	FROM held h LEFT JOIN shares s ON s.incarnation = $1`

// takable is the condition on a lease row (f) that incarnation $1 may take
// it: it is free, or its holder is over (left, declared dead or
// recovered) — not a holder whose heartbeat is merely overdue, which may
// revive with its leases; and the queue of row q is one the node may hold.
var takable = `NOT (f.incarnation = $1 AND f.expires_at > now()) AND (f.expires_at <= now() OR
		NOT EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = f.incarnation AND ` + unended + `))
	AND ` + mayHold(mine, "q")

// takeLease is the change of a lease row (l) that incarnation $1 of node
// $2 takes. Taking a lease increments its epoch: the outcomes of the
// former holder no longer apply.
const takeLease = `UPDATE leases l SET node = $2, incarnation = $1, epoch = l.epoch + 1, expires_at = 'infinity', releasing = false`

// takeSQL takes for incarnation $1 of node $2 up to $3 queues, with work
// or without ($4), that it may take (takable), the scarcest first.
var takeSQL = takeLease + `
	WHERE l.queue IN (SELECT f.queue FROM leases f JOIN queues q ON q.name = f.queue
		WHERE ` + takable + ` AND ` + busy + ` = $4
		ORDER BY ` + scarcity + `, f.queue LIMIT $3 FOR UPDATE OF f SKIP LOCKED)`

// freeMine is the condition on a lease row (f) that it is free and that
// incarnation $1 may hold its queue (of row q).
var freeMine = `f.expires_at <= now() AND ` + mayHold(mine, "q")

// strandedSQL takes for incarnation $1 of node $2, beyond its share, the
// free queues with work that it may hold and that no other hungry node
// may: without it, nobody would deliver them. (A dead node's queues are
// free once its crash recovery ran.)
var strandedSQL = `WITH ` + hungryCTE + `
	` + takeLease + `
	WHERE l.queue IN (SELECT f.queue FROM leases f JOIN queues q ON q.name = f.queue
		WHERE ` + freeMine + ` AND ` + busy + ` AND NOT ` + othersHungry + `
		ORDER BY f.queue FOR UPDATE OF f SKIP LOCKED)`

// strandedExist says whether a free queue with work that incarnation $1
// may hold is left: what strandedSQL looks at, found cheaply.
var strandedExist = `SELECT EXISTS (SELECT 1 FROM leases f JOIN queues q ON q.name = f.queue
	WHERE ` + freeMine + ` AND ` + busy + `)`

// adoptLimit is how many free queues, with work or without ($3),
// incarnation $1 may take in a claim: none while no lease it may hold is
// free or the node is not alive; else up to its share of those queues
// (with work), or of all queues (without).
var adoptLimit = `(SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM leases f JOIN queues q ON q.name = f.queue WHERE ` + freeMine + `)
		OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.incarnation = $1 AND ` + alive + `) THEN 0
	ELSE greatest(0, coalesce((WITH ` + sharesCTE + `
			SELECT CASE WHEN $3 THEN s.busy_share ELSE s.share END FROM shares s WHERE s.incarnation = $1), 0)
		- (SELECT count(*) FROM leases l JOIN queues q ON q.name = l.queue
			WHERE l.incarnation = $1 AND l.expires_at > now() AND (NOT $3 OR ` + busy + `)))::bigint END)`

// queueAdopt queues on b, for a claim of incarnation inc of node id, the
// taking of free queues up to the node's shares — those with work first,
// the scarcest first — so that a new queue (or one given up) waits for no
// heartbeat.
func queueAdopt(b *pgx.Batch, inc int64, id string) {
	b.Queue(takeLease+`
		WHERE l.queue IN (SELECT f.queue FROM leases f JOIN queues q ON q.name = f.queue
			WHERE `+freeMine+` AND `+busy+` = $3
			ORDER BY `+scarcity+`, f.queue LIMIT `+adoptLimit+` FOR UPDATE OF f SKIP LOCKED)`, inc, id, true)
	b.Queue(takeLease+`
		WHERE l.queue IN (SELECT f.queue FROM leases f JOIN queues q ON q.name = f.queue
			WHERE `+freeMine+` AND NOT `+busy+`
			ORDER BY `+scarcity+`, f.queue LIMIT `+strings.ReplaceAll(adoptLimit, "$3", "false")+` FOR UPDATE OF f SKIP LOCKED)`, inc, id)
}

// balance brings the leases node n holds to its fair shares, of the queues
// with work and of all queues, and returns how many it took:
//
//   - below its share of the queues with work, it takes free ones with work
//     (and those of dead nodes) that it may hold, the scarcest first; below
//     its share of all queues, free ones without work;
//   - beyond its share, it takes the free queues with work that it may hold
//     and no other hungry node may (strandedSQL);
//   - over its share of the queues with work, it marks its surplus
//     releasing — of the queues a hungry node may take: its claims take
//     nothing new from them, and once it has nothing of such a queue DLNG,
//     it frees it, at this heartbeat or a later one, for that node to take;
//   - over its share of all queues, it frees queues without work in which
//     it has nothing DLNG.
func (t *txn) balance(n store.Node) (int, error) {
	inc := int64(n.Incarnation)
	var share, busyShare, held, heldBusy, releasing int64
	if err := t.tx.QueryRow(t.ctx, shareSQL, inc).Scan(&share, &busyShare, &held, &heldBusy, &releasing); err != nil {
		return 0, fmt.Errorf("balance queues: %w", err)
	}
	took := int64(0)
	taken := func(rows int64, busy bool) {
		took += rows
		held += rows
		if busy {
			heldBusy += rows
		}
	}
	if limit := busyShare - heldBusy; limit > 0 {
		tag, err := t.tx.Exec(t.ctx, takeSQL, inc, clean(n.ID), limit, true)
		if err != nil {
			return 0, fmt.Errorf("take queues: %w", err)
		}
		taken(tag.RowsAffected(), true)
	}
	var stranded bool
	if err := t.tx.QueryRow(t.ctx, strandedExist, inc).Scan(&stranded); err != nil {
		return 0, fmt.Errorf("take queues: %w", err)
	}
	if stranded {
		tag, err := t.tx.Exec(t.ctx, strandedSQL, inc, clean(n.ID))
		if err != nil {
			return 0, fmt.Errorf("take queues nobody else may: %w", err)
		}
		taken(tag.RowsAffected(), true)
	}
	if limit := share - held; limit > 0 {
		tag, err := t.tx.Exec(t.ctx, takeSQL, inc, clean(n.ID), limit, false)
		if err != nil {
			return 0, fmt.Errorf("take queues: %w", err)
		}
		taken(tag.RowsAffected(), false)
	}
	surplus := heldBusy - busyShare - releasing
	if surplus <= 0 && releasing == 0 && held <= share {
		return int(took), nil
	}
	// First the locks, which wait for no claim (SKIP LOCKED): a claim under
	// way keeps its lease. Then, in statements that see what the claims
	// before committed, the leases are marked or freed.
	rows, err := t.tx.Query(t.ctx, `SELECT queue FROM leases WHERE incarnation = $1 AND expires_at > now()
		ORDER BY queue FOR UPDATE SKIP LOCKED`, inc)
	if err != nil {
		return 0, fmt.Errorf("give up queues: %w", err)
	}
	locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("give up queues: %w", err)
	}
	if surplus > 0 {
		if _, err := t.tx.Exec(t.ctx, `WITH `+hungryCTE+`
			UPDATE leases SET releasing = true WHERE queue IN (
				SELECT l.queue FROM leases l JOIN queues q ON q.name = l.queue
				WHERE l.queue = ANY($2) AND NOT l.releasing AND `+busy+` AND `+othersHungry+`
				ORDER BY l.queue DESC LIMIT $3)`, inc, locked, surplus); err != nil {
			return 0, fmt.Errorf("hand queues over: %w", err)
		}
	}
	const nothingDLNG = `NOT EXISTS (SELECT 1 FROM messages m WHERE m.status = 'DLNG' AND m.incarnation = $1 AND m.queue = l.queue)`
	tag, err := t.tx.Exec(t.ctx, `UPDATE leases SET expires_at = '-infinity', releasing = false WHERE queue IN (
			SELECT l.queue FROM leases l WHERE l.queue = ANY($2) AND l.releasing AND `+nothingDLNG+`)`, inc, locked)
	if err != nil {
		return 0, fmt.Errorf("hand queues over: %w", err)
	}
	freed := tag.RowsAffected()
	if held-freed > share {
		tag, err := t.tx.Exec(t.ctx, `UPDATE leases SET expires_at = '-infinity' WHERE queue IN (
				SELECT l.queue FROM leases l JOIN queues q ON q.name = l.queue
				WHERE l.queue = ANY($2) AND NOT l.releasing AND NOT `+busy+` AND `+nothingDLNG+`
				ORDER BY l.queue DESC LIMIT $3)`, inc, locked, held-freed-share)
		if err != nil {
			return 0, fmt.Errorf("give up queues: %w", err)
		}
		freed += tag.RowsAffected()
	}
	t.wake = t.wake || freed > 0
	return int(took), nil
}
