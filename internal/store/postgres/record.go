package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Record applies a batch of outcomes in one statement (recordSQL) and,
// when p.Claim is set, claims in the same implicit transaction, the queues
// of the outcomes first: one round trip, one commit. The outcomes the
// statement leaves — refused, or of EOIO queues where the HOLD rule or a
// switch's error queues have work to do — go through the general path
// (generalRecord), in a transaction of their own, which reads why.
func (s *Store) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	out := &store.RecordResult{Applied: make([]*domain.Message, len(p.Outcomes))}
	start := s.claims.Load()
	var h *hotRecord
	var hc *hotClaim
	err := s.hotBatch(ctx, func(b *pgx.Batch) func() error {
		h = queueHotRecord(b, p.Node, p.Outcomes)
		if p.Claim != nil {
			hc = queueHotClaim(b, *p.Claim, start[domain.Outbound], h.ids)
		}
		return func() error {
			if err := h.done(); err != nil {
				return err
			}
			if hc != nil {
				return hc.done()
			}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	copy(out.Applied, h.applied)
	for at, err := range h.damaged {
		if out.Damaged == nil {
			out.Damaged = map[string]error{}
		}
		out.Damaged[p.Outcomes[at].ID] = fmt.Errorf("message %s: its outcome is recorded, but the stored message "+
			"cannot be read back: %w", p.Outcomes[at].ID, err)
	}
	if h.ready {
		// Handed back: other nodes may take them.
		s.notify(ctx)
	}
	if left := h.left(); len(left) > 0 {
		rest, err := s.generalRecord(ctx, store.RecordParams{Node: p.Node, Outcomes: outcomesAt(p.Outcomes, left)})
		if err != nil {
			return nil, err
		}
		for i, at := range left {
			out.Applied[at] = rest.Applied[i]
		}
		out.Conflicts = rest.Conflicts
		for id, err := range rest.Damaged {
			if out.Damaged == nil {
				out.Damaged = map[string]error{}
			}
			out.Damaged[id] = err
		}
	}
	if hc == nil {
		return out, nil
	}
	s.sawLeases(hc.gen, false)
	s.turned(start, hc.last)
	if out.Claim, err = s.claimRest(ctx, *p.Claim, hc); err != nil {
		return nil, err
	}
	return out, nil
}

// generalRecord applies a batch of outcomes and, in the same transaction,
// claims, in Go: the outcomes take two round trips whatever their number,
// one that locks their queues and leases and reads the messages, one that
// writes them; the HOLD rule and the switch's error queues follow.
func (s *Store) generalRecord(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	var out *store.RecordResult
	var next turns
	var routable bool
	err := s.engineOn(ctx, s.hot, func(t *txn) error {
		var err error
		out, next, err = t.record(p, s.claims.Load())
		routable = t.routable
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.Claim != nil {
		s.claims.Store(next)
		s.inbound.Store(routable)
	}
	return out, nil
}

// outcomesAt returns the outcomes at the places at.
func outcomesAt(all []store.Outcome, at []int) []store.Outcome {
	out := make([]store.Outcome, len(at))
	for i, j := range at {
		out[i] = all[j]
	}
	return out
}

// held is a queue's lease as a transaction read it.
type held struct {
	incarnation, epoch uint64
}

func (t *txn) record(p store.RecordParams, start turns) (*store.RecordResult, turns, error) {
	out := &store.RecordResult{Applied: make([]*domain.Message, len(p.Outcomes))}
	var ids []pgtype.UUID
	for _, o := range p.Outcomes {
		if id, ok := parseID(o.ID); ok {
			ids = append(ids, id)
		}
	}
	b := &pgx.Batch{}
	t.queueNow(b)
	check := queueFence(b, p.Node)
	var locked, read []*store.QueueRecord
	var msgs []*storedMessage
	damaged := map[[16]byte]error{}
	leases := map[string]held{}
	if len(ids) > 0 {
		// The queues first, in name order — EOIO queues locked, EO queues
		// read (§14: no hot row on the EO path) — then their leases; the
		// messages are read, and locked, after both, so what they say
		// holds until commit.
		queuesOf := func(into *[]*store.QueueRecord) func(pgx.Rows) error {
			return func(rows pgx.Rows) error {
				var err error
				*into, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.QueueRecord, error) { return scanQueue(row) })
				return err
			}
		}
		b.Queue(queueSelect+` WHERE q.name IN (SELECT queue FROM messages WHERE id = ANY($1)) AND q.qos = 'EOIO'
			ORDER BY q.name FOR NO KEY UPDATE OF q`, ids).Query(queuesOf(&locked))
		b.Queue(queueSelect+` WHERE q.name IN (SELECT queue FROM messages WHERE id = ANY($1)) AND q.qos = 'EO'`, ids).
			Query(queuesOf(&read))
		b.Queue(`SELECT queue, incarnation, epoch FROM leases WHERE queue IN (SELECT queue FROM messages WHERE id = ANY($1))
			ORDER BY queue FOR SHARE`, ids).Query(func(rows pgx.Rows) error {
			var q string
			var l held
			_, err := pgx.ForEachRow(rows, []any{&q, &l.incarnation, &l.epoch}, func() error {
				leases[q] = l
				return nil
			})
			return err
		})
		b.Queue(`SELECT `+messageColumns+` FROM messages WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids).Query(func(rows pgx.Rows) error {
			defer rows.Close()
			var sc rowScanner
			for rows.Next() {
				var ms messageScan
				if err := sc.scan(rows, ms.dest()...); err != nil {
					// A row that does not decode stops its own outcome
					// only; the id is the first column.
					if !ms.id.Valid {
						return err
					}
					damaged[ms.id.Bytes] = err
					continue
				}
				msgs = append(msgs, ms.message())
			}
			return rows.Err()
		})
	}
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, nil, fmt.Errorf("record outcomes: %w", err)
	}
	if err := check(); err != nil {
		return nil, nil, err
	}
	for _, q := range locked {
		t.keep(q, true)
	}
	for _, q := range read {
		t.keep(q, false)
	}
	byID := map[[16]byte]*storedMessage{}
	for _, m := range msgs {
		id, _ := parseID(m.ID)
		byID[id.Bytes] = m
	}
	at, err := t.now()
	if err != nil {
		return nil, nil, err
	}
	w := &pgx.Batch{}
	for i, o := range p.Outcomes {
		var cur *storedMessage
		if id, ok := parseID(o.ID); ok {
			cur = byID[id.Bytes]
			if err := damaged[id.Bytes]; err != nil && cur == nil {
				if out.Damaged == nil {
					out.Damaged = map[string]error{}
				}
				out.Damaged[o.ID] = fmt.Errorf("message %s: the stored message cannot be read: %w", o.ID, err)
				continue
			}
		}
		after, err := t.outcome(w, p.Node, o, cur, leases, at)
		if err != nil {
			if !isConflict(err) {
				return nil, nil, err
			}
			if out.Conflicts == nil {
				out.Conflicts = map[string]error{}
			}
			out.Conflicts[o.ID] = err
			continue
		}
		// A message named twice finds its first outcome.
		id, _ := parseID(o.ID)
		byID[id.Bytes] = &storedMessage{Message: after, payloadID: cur.payloadID}
		out.Applied[i] = after
	}
	eoio := slices.ContainsFunc(out.Applied, func(m *domain.Message) bool { return m != nil && m.QoS == domain.EOIO })
	if p.Claim != nil && !eoio {
		// Nothing to read back before the claim (the HOLD rule is
		// EOIO's): the writes travel with the claim's first statements.
		claim, next, err := t.claim(*p.Claim, start, false, w)
		if err != nil {
			return nil, nil, err
		}
		out.Claim = claim
		return out, next, nil
	}
	// The writes go out with the next statements: the reads of the HOLD
	// rule, or the commit.
	if err := t.deferWrites(w); err != nil {
		return nil, nil, fmt.Errorf("record outcomes: %w", err)
	}
	touched := map[string]bool{}
	for i, after := range out.Applied {
		if after == nil || after.QoS != domain.EOIO {
			continue
		}
		touched[after.Queue] = true
		if out.Applied[i], err = t.divert(after, store.EngineEntry(at, p.Node, "")); err != nil {
			return nil, nil, err
		}
	}
	// The HOLD rule once per queue, after all of the batch's outcomes and
	// the moves to error queues they caused.
	for _, q := range slices.Sorted(maps.Keys(touched)) {
		if err := store.RestoreHold(t, q, store.EngineEntry(at, p.Node, "")); err != nil {
			return nil, nil, err
		}
	}
	if p.Claim == nil {
		return out, start, nil
	}
	claim, next, err := t.claim(*p.Claim, start, false, nil)
	if err != nil {
		return nil, nil, err
	}
	out.Claim = claim
	return out, next, nil
}

// outcome checks one outcome — a compare-and-set on DLNG, the claiming
// incarnation and the lease epoch — and queues its writes on b.
func (t *txn) outcome(b *pgx.Batch, node store.Node, o store.Outcome, cur *storedMessage, leases map[string]held,
	at time.Time) (*domain.Message, error) {
	if cur == nil {
		return nil, domain.Conflictf("message %s: it no longer exists", o.ID)
	}
	l := leases[cur.Queue]
	switch {
	case cur.Status != domain.StatusDLNG:
		return nil, domain.Conflictf("message %s: status is %s, expected DLNG", o.ID, cur.Status)
	case cur.Node != node.ID || cur.Incarnation != node.Incarnation:
		return nil, domain.Conflictf("message %s: it is DLNG for node %s incarnation %d, not %s incarnation %d",
			o.ID, cur.Node, cur.Incarnation, node.ID, node.Incarnation)
	case l.incarnation != node.Incarnation || l.epoch != o.Epoch:
		return nil, fmt.Errorf("message %s: lease epoch %d, the queue's is %d (incarnation %d): %w", o.ID, o.Epoch, l.epoch,
			l.incarnation, store.ErrFenced)
	}
	h := store.EngineEntry(at, node, o.Reason)
	settled := func(m *domain.Message) { m.Node, m.Incarnation = "", 0 }
	switch o.Kind {
	case store.OutcomeDelivered:
		if h.Reason == "" {
			h.Reason = "delivered"
		}
		return t.change(cur, domain.StatusDLVD, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass = "", ""
		}, h)
	case store.OutcomeRetry, store.OutcomeFailed:
		to, next := domain.StatusNDLV, (*time.Time)(nil)
		if o.Kind == store.OutcomeRetry {
			due := at.Add(o.RetryIn)
			to, next = domain.StatusWAIT, &due
		}
		if h.Reason == "" {
			h.Reason = string(o.Class) + " error: " + o.Error
		}
		return t.change(cur, to, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass, m.NextAttemptAt = o.Error, o.Class, next
		}, h)
	case store.OutcomeHandBack:
		if h.Reason == "" {
			h.Reason = "handed back at shutdown"
		}
		return t.change(cur, domain.StatusTBDL, func(m *domain.Message) {
			settled(m)
			m.Attempts = max(0, m.Attempts-1)
		}, h)
	}
	return nil, fmt.Errorf("message %s: outcome kind %d is unknown", o.ID, o.Kind)
}

// isConflict reports a refusal that concerns one outcome only.
func isConflict(err error) bool {
	return errors.Is(err, domain.ErrConflict) || errors.Is(err, store.ErrFenced)
}
