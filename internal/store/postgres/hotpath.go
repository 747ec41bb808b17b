package postgres

import "strings"

// The engine's hot path in River's shape (§14; River's JobGetAvailable and
// JobSetStateIfRunningMany): a claim is one statement, a batch of outcomes
// another, and an outcome's claim rides in the same implicit transaction —
// a batch of the two, one round trip, one commit. Both are planned once
// per connection, on the pinned plans of plans.go.
//
// Locks: neither statement waits for a row while it holds a row another
// transaction could want in another order. The claim waits for nothing: it
// takes the leases FOR SHARE, the queue rows it takes from and the
// messages it takes FOR UPDATE, each SKIP LOCKED — a row another
// transaction holds is left for the next claim, and never counted as
// something more to claim (no spin). The outcomes wait, in the order every
// writer keeps: the rows of the EOIO queues in name order, the leases, the
// messages, then the rows of the EO queues in name order.

// claimSQL claims, for incarnation $1 of node $2 with receivers $3, up to
// $5 outbound messages of the queues it holds, in turn after queue $6
// (the queues of the messages $8 first: an EOIO queue's next head rides
// with its previous outcome), EO queues up to the window $4; candidates
// $7 is 0 to take blacklist candidates like any other message, 1 to leave
// and count them. It locks the rows of the first $5 queues in turn that
// may start something and that no other transaction holds — a queue's row
// decides its room, so that two claims of one node never fill a window
// twice — and per queue exactly the messages it takes: least(room, what is
// left of the limit), its due WAIT messages while it has WAIT messages,
// else its first TBDL messages in seq order, never reaching past one
// another transaction holds, so that an EOIO queue's head is never
// overtaken. What the rows another transaction holds have ready is not
// counted as more — more is said only of a claim that took its limit —:
// the claim does not come back at once to find them held again. It marks them DLNG with their history
// entries, moves the queues' counters, and returns each with its lease
// epoch and payload, after a summary row's columns: the node's state
// (fenceSQL), the database's clock, the candidates left, whether more was
// ready than the limit, when the next retry is due, whether an inbound
// queue has messages to route, how many EOIO queues need the switch's
// order rules (store.LaneWaits, applied by the general claim), and
// lease_changes.
var claimSQL = `WITH fence(state) AS (` + fenceSQL + `),
	held AS (SELECT l.queue, l.epoch, q.qos FROM leases l JOIN queues q ON q.name = l.queue
		WHERE l.incarnation = $1 AND l.expires_at > now() AND NOT l.releasing AND (SELECT state FROM fence) = 0
			AND q.stage = 'outbound' AND NOT q.stopped AND (q.n_tbdl > 0 OR q.n_wait > 0) AND q.receiver = ANY($3::text[])
		FOR SHARE OF l SKIP LOCKED),
	switched(yes) AS (SELECT EXISTS (SELECT 1 FROM eoio_switch WHERE old_prefix IS NOT NULL)),
	pref AS (SELECT DISTINCT m.queue FROM messages m WHERE m.id = ANY($8::uuid[])),
	room AS (SELECT h.queue, h.epoch, row_number() OVER (ORDER BY p.queue IS NOT NULL DESC, q.name <= $6, q.name) AS ord
		FROM held h JOIN queues q ON q.name = h.queue LEFT JOIN pref p ON p.queue = q.name
		WHERE NOT (h.qos = 'EOIO' AND (SELECT yes FROM switched)) AND (q.n_wait > 0 OR ` + startsSQL + `)
			AND ` + roomSQL("$4", "0") + ` > 0),
	lq AS (SELECT r.queue, r.epoch, r.ord, q.n_wait > 0 AS waiting,
			CASE WHEN q.n_wait > 0 THEN (SELECT count(*) FROM (SELECT 1 FROM messages x WHERE x.queue = q.name AND x.status = 'WAIT'
					AND x.next_attempt_at <= now() LIMIT ` + roomSQL("$4", "0") + `) d)
				WHEN ` + startsSQL + ` THEN least(` + roomSQL("$4", "0") + `, q.n_tbdl)
				ELSE 0 END AS avail
		FROM room r JOIN queues q ON q.name = r.queue
		ORDER BY r.ord LIMIT $5
		FOR NO KEY UPDATE OF q SKIP LOCKED),
	plan AS (SELECT l.queue, l.epoch, l.ord, l.waiting, greatest(0, least(l.avail,
			$5 - coalesce(sum(l.avail) OVER (ORDER BY l.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS take
		FROM lq l),
	c AS (SELECT m.tid, m.id, m.status, m.crashes, lq.epoch, lq.ord
		FROM plan lq CROSS JOIN LATERAL (
			(SELECT x.id FROM messages x WHERE lq.waiting AND x.queue = lq.queue AND x.status = 'WAIT' AND x.next_attempt_at <= now()
				ORDER BY x.next_attempt_at, x.id LIMIT lq.take)
			UNION ALL
			(SELECT x.id FROM messages x WHERE NOT lq.waiting AND x.queue = lq.queue AND x.status = 'TBDL'
				ORDER BY x.seq LIMIT lq.take)) h
		CROSS JOIN LATERAL (SELECT y.ctid AS tid, y.id, y.queue, y.status, y.crashes, y.next_attempt_at FROM messages y
			WHERE y.id = h.id FOR UPDATE SKIP LOCKED) m
		WHERE m.queue = lq.queue
			AND CASE WHEN lq.waiting THEN m.status = 'WAIT' AND m.next_attempt_at <= now() ELSE m.status = 'TBDL' END),
	upd AS (UPDATE messages m SET status = 'DLNG', attempts = m.attempts + 1, node = $2, incarnation = $1,
			next_attempt_at = NULL, updated_at = now(), passed_over = false,
			history = m.history || ` + historySQL("c.status", "'DLNG'", "$2", "'engine'", "'delivery attempt ' || (m.attempts + 1)") + `
		FROM c WHERE m.ctid = c.tid AND ($7 = 0 OR c.crashes = 0)
		RETURNING ` + prefixed("m.", messageColumns) + `, c.epoch, c.ord, c.status AS was),
	cnt AS (UPDATE queues q SET n_tbdl = q.n_tbdl - d.tbdl, n_wait = q.n_wait - d.wait, n_dlng = q.n_dlng + d.tbdl + d.wait
		FROM (SELECT u.queue, count(*) FILTER (WHERE u.was = 'TBDL') AS tbdl, count(*) FILTER (WHERE u.was = 'WAIT') AS wait
			FROM upd u GROUP BY u.queue) d
		WHERE q.name = d.queue),
	summary AS (SELECT (SELECT state FROM fence) AS state, now() AS now,
		(SELECT count(*) FROM c WHERE $7 <> 0 AND c.crashes > 0) AS candidates,
		(SELECT count(*) FROM upd) >= $5 AND (coalesce((SELECT sum(l.avail) FROM lq l), 0) > $5
			OR (SELECT count(*) FROM room) > $5) AS more,
		(SELECT min(d.at) FROM held h JOIN queues q ON q.name = h.queue CROSS JOIN LATERAL (SELECT x.next_attempt_at AS at
			FROM messages x WHERE q.n_wait > 0 AND x.queue = q.name AND x.status = 'WAIT' AND x.next_attempt_at > now()
			ORDER BY x.next_attempt_at LIMIT 1) d) AS next_due,
		EXISTS (SELECT 1 FROM leases l JOIN queues q ON q.name = l.queue WHERE l.incarnation = $1 AND l.expires_at > now()
			AND NOT l.releasing AND q.stage = 'inbound' AND q.n_tbdl > 0 AND ` + startsSQL + `) AS routable,
		(SELECT count(*) FROM held h WHERE h.qos = 'EOIO' AND (SELECT yes FROM switched)) AS lanes,
		(SELECT last_value FROM lease_changes) AS gen)
	SELECT s.state, s.now, s.candidates, s.more, s.next_due, s.routable, s.lanes, s.gen,
		` + prefixed("u.", messageColumns) + `, u.epoch, p.data
	FROM summary s LEFT JOIN (upd u LEFT JOIN payloads p ON p.id = u.payload_id) ON true
	ORDER BY u.ord, u.seq`

// recordSQL applies the outcomes of the arrays $3..$9 — message id,
// lease epoch, status to, error, error class, retry delay in microseconds,
// history reason — for incarnation $1 of node $2, each a compare-and-set:
// the message is DLNG for the incarnation and its queue's lease is the
// incarnation's under the outcome's epoch. An EOIO outcome applies here
// only when the HOLD rule has nothing to do in its queue (store.HoldSettled:
// a delivery or a hand-back in a queue where nothing is held, nothing WAITs
// and nothing is NDLV); the rest are left to the general path, as are the
// refusals, whose reasons are read only then. It returns the node's state
// (fenceSQL), then per outcome applied its place in the arrays and the
// message as stored after it. Each message is found once, by its id, and
// changed by the row's address: the compare-and-set is checked on the row
// found (its status compared to a column, not a constant, so that the
// index of the statuses never looks like a way to find the messages).
var recordSQL = `WITH o AS (SELECT * FROM unnest($3::uuid[], $4::int8[], $5::text[], $6::text[], $7::text[], $8::int8[], $9::text[])
			WITH ORDINALITY AS o(id, epoch, st, err, class, retry_us, reason, ord)),
	fence(state) AS (` + fenceSQL + `),
	mq AS (SELECT o.*, m.tid, m.queue, 'DLNG'::text AS was FROM o
		CROSS JOIN LATERAL (SELECT x.ctid AS tid, x.queue FROM messages x WHERE x.id = o.id LIMIT 1) m),
	eoioq AS (SELECT q.name, q.n_hold = 0 AND q.n_wait = 0 AND q.n_ndlv = 0 AS settled FROM queues q
		WHERE q.name IN (SELECT mq.queue FROM mq) AND q.qos = 'EOIO' ORDER BY q.name FOR NO KEY UPDATE OF q),
	ls AS (SELECT l.queue, l.epoch FROM leases l WHERE l.queue IN (SELECT mq.queue FROM mq) AND l.incarnation = $1
			AND (SELECT count(*) FROM eoioq) >= 0
		ORDER BY l.queue FOR SHARE OF l),
	upd AS (UPDATE messages m SET status = o.st, node = NULL, incarnation = NULL, updated_at = now(),
			error = CASE WHEN o.st = 'DLVD' THEN NULL WHEN o.st = 'TBDL' THEN m.error ELSE nullif(o.err, '') END,
			error_class = CASE WHEN o.st = 'DLVD' THEN NULL WHEN o.st = 'TBDL' THEN m.error_class ELSE nullif(o.class, '') END,
			next_attempt_at = CASE WHEN o.st = 'WAIT' THEN now() + o.retry_us * interval '1 microsecond' END,
			attempts = CASE WHEN o.st = 'TBDL' THEN greatest(0, m.attempts - 1) ELSE m.attempts END,
			passed_over = (m.qos = 'EO' AND o.st = 'NDLV' AND o.class IN ('permanent', 'crash')),
			history = m.history || ` + historySQL("'DLNG'", "o.st", "$2", "'engine'", "o.reason") + `
		FROM mq o
		WHERE m.ctid = o.tid AND (m.status, m.node, m.incarnation) IS NOT DISTINCT FROM (o.was, $2, $1)
			AND o.epoch = (SELECT ls.epoch FROM ls WHERE ls.queue = m.queue)
			AND (m.qos = 'EO' OR o.st IN ('DLVD', 'TBDL') AND EXISTS (SELECT 1 FROM eoioq e WHERE e.name = m.queue AND e.settled))
			AND (SELECT state FROM fence) = 0 AND (SELECT count(*) FROM ls) >= 0
		RETURNING o.ord, m.passed_over, ` + prefixed("m.", messageColumns) + `),
	d AS (SELECT u.queue, count(*) AS n, count(*) FILTER (WHERE u.status = 'DLVD') AS dlvd,
			count(*) FILTER (WHERE u.status = 'WAIT') AS wait, count(*) FILTER (WHERE u.status = 'NDLV') AS ndlv,
			count(*) FILTER (WHERE u.status = 'TBDL') AS tbdl, count(*) FILTER (WHERE u.passed_over) AS passed
		FROM upd u GROUP BY u.queue),
	lk AS (SELECT q.name FROM queues q WHERE q.name IN (SELECT d.queue FROM d) AND q.qos = 'EO'
		ORDER BY q.name FOR NO KEY UPDATE OF q),
	cnt AS (UPDATE queues q SET n_dlng = q.n_dlng - d.n, n_dlvd = q.n_dlvd + d.dlvd, n_wait = q.n_wait + d.wait,
			n_ndlv = q.n_ndlv + d.ndlv, n_tbdl = q.n_tbdl + d.tbdl, passed_over = q.passed_over + d.passed
		FROM d WHERE q.name = d.queue AND (SELECT count(*) FROM lk) >= 0)
	SELECT f.state, u.ord, ` + prefixed("u.", messageColumns) + `
	FROM fence f LEFT JOIN upd u ON true
	ORDER BY u.ord`

// historySQL is appendHistory said in SQL, over SQL expressions of type
// text: the entry of a change at the statement's time (now()), from status
// from to status to, by node and actor, for reason.
func historySQL(from, to, node, actor, reason string) string {
	field := func(x string) string {
		x = `convert_to(coalesce(` + x + `, ''), 'UTF8')`
		return `int4send(octet_length(` + x + `)) || ` + x
	}
	return `(int8send(round(extract(epoch FROM now()) * 1000000)::int8) || ` + field(from) + ` || ` + field(to) + ` || ` +
		field(node) + ` || ` + field(actor) + ` || ` + field(reason) + `)`
}

// prefixed qualifies each column of a list with a table's alias.
func prefixed(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
