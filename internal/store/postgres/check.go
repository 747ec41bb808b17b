package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/store"
)

// invariants are queries that return a row for every place where the
// store's redundant data disagrees with the messages: each names what it
// found.
var invariants = []struct{ what, sql string }{
	{"queue counters differ from the messages", `
		SELECT q.name FROM queues q LEFT JOIN (
			SELECT queue,
				count(*) FILTER (WHERE status = 'PEND') AS pend, count(*) FILTER (WHERE status = 'TBDL') AS tbdl,
				count(*) FILTER (WHERE status = 'DLNG') AS dlng, count(*) FILTER (WHERE status = 'WAIT') AS wait,
				count(*) FILTER (WHERE status = 'HOLD') AS hold, count(*) FILTER (WHERE status = 'NDLV') AS ndlv,
				count(*) FILTER (WHERE status = 'DLVD') AS dlvd, count(*) FILTER (WHERE status = 'FAIL') AS fail,
				count(*) FILTER (WHERE passed_over) AS passed_over, max(seq) AS max_seq,
				count(*) FILTER (WHERE status = 'PEND' AND stuck) AS stuck
			FROM (SELECT queue, status, passed_over, seq, stuck FROM messages
				-- a message routing moved on counts as DLVD in the inbound queue it passed through (§3)
				UNION ALL SELECT inbound_queue, 'DLVD', false, NULL, false FROM messages WHERE inbound_queue IS NOT NULL) m
			GROUP BY queue) m ON m.queue = q.name
		WHERE (q.n_pend, q.n_tbdl, q.n_dlng, q.n_wait, q.n_hold, q.n_ndlv, q.n_dlvd, q.n_fail, q.passed_over, q.n_stuck)
			IS DISTINCT FROM (coalesce(m.pend, 0), coalesce(m.tbdl, 0), coalesce(m.dlng, 0), coalesce(m.wait, 0),
			coalesce(m.hold, 0), coalesce(m.ndlv, 0), coalesce(m.dlvd, 0), coalesce(m.fail, 0), coalesce(m.passed_over, 0),
			coalesce(m.stuck, 0))
			OR q.last_seq < coalesce(m.max_seq, 0)`},
	{"messages in a queue without a record", `
		SELECT DISTINCT m.queue FROM messages m WHERE NOT EXISTS (SELECT 1 FROM queues q WHERE q.name = m.queue)`},
	{"PEND messages with a seq, or others without", `
		SELECT id::text FROM messages WHERE (status = 'PEND') <> (seq IS NULL)`},
	{"payload reference counts differ from the messages that share them", `
		SELECT coalesce(p.id, m.payload_id)::text FROM payloads p FULL JOIN (
			-- an earlier version of an edited payload holds a reference too
			SELECT payload_id, count(*) AS n FROM (SELECT payload_id FROM messages
				UNION ALL SELECT payload_id FROM payload_versions) r GROUP BY payload_id) m ON m.payload_id = p.id
		WHERE p.refs IS DISTINCT FROM m.n`},
	{"messages without history", `
		SELECT id::text FROM messages WHERE octet_length(history) = 0`},
}

// Check verifies, in one snapshot, that the queue counters, payload
// reference counts and histories agree with the messages: what the store
// keeps in step by hand. It reads every row; it is meant for tests and for
// an operator's diagnosis, not for routine use.
func (s *Store) Check(ctx context.Context) error {
	return s.View(ctx, func(r store.Reader) error { return s.check(ctx, r.(*txn).tx) })
}

func (s *Store) check(ctx context.Context, tx querier) error {
	var problems []string
	for _, inv := range invariants {
		rows, err := tx.Query(ctx, inv.sql)
		if err != nil {
			return fmt.Errorf("check %s: %w", s.target, err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("check %s: %w", s.target, err)
		}
		if len(found) > 0 {
			if len(found) > 10 {
				found = append(found[:10], fmt.Sprintf("and %d more", len(found)-10))
			}
			problems = append(problems, inv.what+": "+strings.Join(found, ", "))
		}
	}
	if len(problems) > 0 {
		return errors.New("the store " + s.target + " is inconsistent: " + strings.Join(problems, "; "))
	}
	return nil
}
