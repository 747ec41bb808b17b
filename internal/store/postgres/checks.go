package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The PostgreSQL store's side of store.CheckStore: the check-back of
// transactional sends (§9) in a cluster. A node checks the PEND messages of
// the queues whose lease it holds; a claim marks each message it takes with
// the database's time (last_check_at), under a row lock it does not wait
// for (SKIP LOCKED), so two nodes never take the same message, and none
// takes it again within tx.check_interval. The outcomes go through the
// rules every store shares (store.RecordCheck), each only while the node
// still holds the message's queue.

var _ store.CheckStore = (*Store)(nil)

// leasedBy is the condition on a message (m) that node $1's incarnation
// holds its queue's lease.
const leasedBy = `EXISTS (SELECT 1 FROM leases l WHERE l.queue = m.queue AND l.incarnation = $1 AND l.expires_at > now())`

// waiting is the condition on a message (m) that it waits for a check-back.
const waiting = `m.status = 'PEND' AND NOT m.stuck`

// ClaimChecks marks the PEND messages of the node's queues that are due
// for a check-back, oldest wait first.
func (s *Store) ClaimChecks(ctx context.Context, p store.ClaimChecksParams) (*store.ClaimChecksResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 1 << 30
	}
	var out *store.ClaimChecksResult
	err := s.Update(ctx, func(w store.Writer) error {
		t := w.(*txn)
		out = &store.ClaimChecksResult{Claimed: []*domain.Message{}}
		after, interval := p.After.Microseconds(), p.Interval.Microseconds()
		// One more than the limit says whether more are due.
		rows, err := t.tx.Query(t.ctx, `SELECT m.id FROM messages m
			WHERE `+waiting+` AND `+leasedBy+` AND (
				(m.last_check_at IS NULL AND m.created_at <= now() - $2 * interval '1 microsecond') OR
				(m.last_check_at IS NOT NULL AND m.last_check_at <= now() - $3 * interval '1 microsecond'))
			ORDER BY coalesce(m.last_check_at, m.created_at), m.id
			LIMIT $4 FOR UPDATE OF m SKIP LOCKED`, p.Node.Incarnation, after, interval, limit+1)
		if err != nil {
			return fmt.Errorf("claim check-backs: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.UUID])
		if err != nil {
			return fmt.Errorf("claim check-backs: %w", err)
		}
		if len(ids) > limit {
			ids, out.More = ids[:limit], true
		}
		if len(ids) > 0 {
			claimed, err := t.messages(`UPDATE messages SET last_check_at = now() WHERE id = ANY($1) RETURNING `+messageColumns, ids)
			if err != nil {
				return fmt.Errorf("claim check-backs: %w", err)
			}
			out.Claimed = claimed
		}
		// The next due, claimed ones included: they wait for their next
		// check from now on.
		var next pgtype.Timestamptz
		err = t.tx.QueryRow(t.ctx, `SELECT least(
				(SELECT min(m.created_at) + $2 * interval '1 microsecond' FROM messages m
					WHERE `+waiting+` AND m.last_check_at IS NULL AND `+leasedBy+`),
				(SELECT min(m.last_check_at) + $3 * interval '1 microsecond' FROM messages m
					WHERE `+waiting+` AND m.last_check_at IS NOT NULL AND `+leasedBy+`))`,
			p.Node.Incarnation, after, interval).Scan(&next)
		if err != nil {
			return fmt.Errorf("claim check-backs: next due: %w", err)
		}
		if next.Valid {
			out.NextDue = next.Time.UTC()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordChecks applies check-back outcomes: each only while the node holds
// the message's queue, then by store.RecordCheck.
func (s *Store) RecordChecks(ctx context.Context, p store.RecordChecksParams) (*store.RecordChecksResult, error) {
	var out *store.RecordChecksResult
	err := s.Update(ctx, func(w store.Writer) error {
		t := w.(*txn)
		out = &store.RecordChecksResult{Applied: make([]*domain.Message, len(p.Outcomes))}
		at, err := t.now()
		if err != nil {
			return err
		}
		for i, o := range p.Outcomes {
			err := t.holds(p.Node, o.ID)
			var m *domain.Message
			if err == nil {
				m, err = store.RecordCheck(t, p.Node, o, p.MaxChecks, at)
			}
			if errors.Is(err, domain.ErrConflict) {
				if out.Conflicts == nil {
					out.Conflicts = map[string]error{}
				}
				out.Conflicts[o.ID] = err
				continue
			}
			if err != nil {
				return err
			}
			out.Applied[i] = m
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// holds refuses, as fenced, an outcome for a message whose queue the node
// no longer holds: another node may check it now. It locks the queue first,
// so the lease cannot pass to another node before the outcome is stored. A
// message that is gone is left to store.RecordCheck.
func (t *txn) holds(n store.Node, id string) error {
	m, err := t.message(id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var held bool
	err = t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM leases WHERE queue = $1 AND incarnation = $2 AND expires_at > now())`,
		m.Queue, n.Incarnation).Scan(&held)
	if err != nil {
		return fmt.Errorf("message %s: lease of queue %s: %w", id, m.Queue, err)
	}
	if !held {
		return fmt.Errorf("message %s: node %s incarnation %d no longer holds queue %s: %w", id, n.ID, n.Incarnation, m.Queue, store.ErrFenced)
	}
	return nil
}

// queueCheckUpdate queues, on a transition's batch, the write of the
// check-back's fields when the transition changed them (store.RecordCheck,
// a commit that ends a stuck transaction). last_check_at is written only
// when it changed, so that a transition never undoes a claim it raced.
func queueCheckUpdate(b *pgx.Batch, id pgtype.UUID, cur, next *domain.Message) {
	sameAt := (cur.LastCheckAt == nil) == (next.LastCheckAt == nil) &&
		(cur.LastCheckAt == nil || cur.LastCheckAt.Equal(*next.LastCheckAt))
	if cur.Checks == next.Checks && cur.LastAnswer == next.LastAnswer && cur.Stuck == next.Stuck && sameAt {
		return
	}
	var at pgtype.Timestamptz
	if next.LastCheckAt != nil {
		at = pgtype.Timestamptz{Time: *next.LastCheckAt, Valid: true}
	}
	b.Queue(`UPDATE messages SET checks = $2, last_answer = $3, stuck = $4,
		last_check_at = CASE WHEN $5 THEN last_check_at ELSE $6::timestamptz END WHERE id = $1`,
		id, next.Checks, optional(next.LastAnswer), next.Stuck, sameAt, at)
}
