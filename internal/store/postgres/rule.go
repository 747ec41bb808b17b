package postgres

// What a queue may start now — store.QueueRecord's Room and Starts — said in
// SQL over a row of queues (q), for the claims' statements, which choose in
// one statement what the embedded store chooses in Go — and the claim's
// part of it, store.ClaimParams.Delivers. storetest holds a case for each
// branch (stopped, blocked, waiting, the EO window, EOIO's one, due
// retries, receivers not configured), so that the two cannot drift apart.

// roomSQL is QueueRecord.Room(window) plus free, messages the claim's own
// transaction frees: none while the queue is stopped or blocked, one for
// an EOIO queue, window for an EO queue, less those DLNG.
func roomSQL(window, free string) string {
	return `greatest(0, CASE WHEN q.stopped OR q.n_ndlv > q.passed_over THEN 0 WHEN q.qos = 'EOIO' THEN 1 ELSE ` +
		window + ` END - q.n_dlng + ` + free + `)`
}

// startsSQL is QueueRecord.Starts: a message of the queue may start for
// the first time — not while it is stopped or blocked, nor while a message
// of it WAITs for its retry.
const startsSQL = `(NOT q.stopped AND q.n_ndlv <= q.passed_over AND q.n_wait = 0)`

// deliversSQL is store.ClaimParams.Delivers over a row of queues (q), the
// claim's receivers in the text[] parameter receivers: every inbound
// queue, and the outbound queues of the node's receivers — none when the
// node has none (an empty array, or NULL).
func deliversSQL(receivers string) string {
	return `(q.stage = 'inbound' OR q.receiver = ANY(` + receivers + `::text[]))`
}

// headsSQL selects, for the queue of a row of queues (q), its first TBDL
// messages in seq order, up to limit, and locks them — leaving out those
// another transaction has locked, but never reaching past them: the node's
// two claimers (the loop's claims and the completer's) may read one queue
// at once, and a head the other locked must not let the next message of an
// EOIO queue start before it.
func headsSQL(limit string) string {
	// Each head is locked by a statement of its own (the lateral join's),
	// which keeps the plan to the index runs of the queue's heads; it is
	// found by its id alone and its status checked on the row locked, so
	// that no index of the status looks like a way to find it (plans.go).
	return `SELECT m.* FROM (SELECT h.id, h.seq FROM messages h
			WHERE h.queue = q.name AND h.status = 'TBDL' ORDER BY h.seq LIMIT ` + limit + `) h
		CROSS JOIN LATERAL (SELECT ` + messageColumns + ` FROM messages m WHERE m.id = h.id
			FOR UPDATE SKIP LOCKED) m
		WHERE m.status = 'TBDL'
		ORDER BY h.seq`
}
