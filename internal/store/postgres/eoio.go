package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// eoioLockClass is the first key of the advisory lock that orders EOIO
// placements and switches (the second is the schema's name, as for
// migrations): a writer that places EOIO messages holds it shared until it
// commits, a switch exclusively. So a message placed under the old state
// is committed before the switch is, and a claim that sees the new state
// sees every message of the old set.
const eoioLockClass = 0x656f696f // "eoio"

const eoioSelect = `SELECT prefix, queues, coalesce(old_prefix, ''), old_queues, switched_at, switched_by FROM eoio_switch`

// EOIO returns the switch state; in a writable transaction under the
// shared lock. A transaction reads it once.
func (t *txn) EOIO() (domain.EOIOSwitch, error) {
	if t.eoio != nil {
		return *t.eoio, nil
	}
	var err error
	if t.writable {
		b := &pgx.Batch{}
		t.queueEOIO(b)
		err = t.tx.SendBatch(t.ctx, b).Close()
	} else {
		s := domain.DefaultEOIO
		if err = scanEOIO(t.tx.QueryRow(t.ctx, eoioSelect), &s); err == nil {
			t.eoio = &s
		}
	}
	if err != nil {
		return domain.DefaultEOIO, fmt.Errorf("read the EOIO switch state: %w", err)
	}
	return *t.eoio, nil
}

// queueEOIO queues on b the read of the switch state, under the shared
// lock that a switch waits for, unless the transaction read it already: a
// claim reads it with its leases, so that the order rules of its EOIO
// heads cost no round trip of their own.
func (t *txn) queueEOIO(b *pgx.Batch) {
	if t.eoio != nil {
		return
	}
	// Two statements: the read's snapshot must come after the wait.
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1, hashtext(current_schema()))`, eoioLockClass)
	b.Queue(eoioSelect).QueryRow(func(row pgx.Row) error {
		s := domain.DefaultEOIO
		if err := scanEOIO(row, &s); err != nil {
			return err
		}
		t.eoio = &s
		return nil
	})
}

func scanEOIO(row pgx.Row, s *domain.EOIOSwitch) error {
	err := row.Scan(&s.Current.Prefix, &s.Current.Queues, &s.Old.Prefix, &s.Old.Queues, &s.At, &s.By)
	if errors.Is(err, pgx.ErrNoRows) {
		*s = domain.DefaultEOIO
		return nil
	}
	s.At = s.At.UTC()
	return err
}

// LockSwitch takes the switch's lock exclusively (store.SwitchLocker):
// held, the transaction's reads of the state need no shared one of their
// own.
func (t *txn) LockSwitch() error {
	if _, err := t.tx.Exec(t.ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, eoioLockClass); err != nil {
		return fmt.Errorf("lock the EOIO switch: %w", err)
	}
	return nil
}

var _ store.SwitchLocker = (*txn)(nil)

// SetEOIO stores the switch state under the exclusive lock.
func (t *txn) SetEOIO(s domain.EOIOSwitch) error {
	s.At = storedTime(s.At)
	old := pgtype.Text{String: string(s.Old.Prefix), Valid: s.Old.Prefix != ""}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, eoioLockClass)
	b.Queue(`INSERT INTO eoio_switch (prefix, queues, old_prefix, old_queues, switched_at, switched_by)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (one) DO UPDATE SET prefix = EXCLUDED.prefix, queues = EXCLUDED.queues,
			old_prefix = EXCLUDED.old_prefix, old_queues = EXCLUDED.old_queues,
			switched_at = EXCLUDED.switched_at, switched_by = EXCLUDED.switched_by`,
		string(s.Current.Prefix), s.Current.Queues, old, s.Old.Queues, s.At, clean(s.By))
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("store the EOIO switch state: %w", err)
	}
	t.eoio = &s
	return nil
}

// Move takes a message out of its queue and puts it at the end of another,
// its status unchanged. Both queues' rows are locked: the source's first.
func (t *txn) Move(p store.MoveParams) (*domain.Message, error) {
	if p.Queue == "" {
		return nil, domain.Invalidf("queue to move to is required")
	}
	cur, err := t.message(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	switch {
	case cur.Status == domain.StatusDLNG:
		return nil, domain.Invalidf("message %s is being delivered (DLNG): it cannot move to %s", p.ID, p.Queue)
	case cur.Queue == p.Queue:
		return nil, domain.Invalidf("message %s is in queue %s already", p.ID, p.Queue)
	}
	h := p.History
	if h.At.IsZero() {
		if h.At, err = t.now(); err != nil {
			return nil, err
		}
	}
	h.From, h.To = cur.Status, cur.Status
	next := cur.Clone()
	next.Queue, next.Seq, next.UpdatedAt, next.History = p.Queue, 0, h.At, nil
	storedTimes(next)
	to, created, err := t.queueFor(next)
	if err != nil {
		return nil, err
	}
	receiver := ""
	if next.Stage == domain.Outbound {
		receiver = next.Receiver
	}
	if to.QoS != next.QoS || to.Stage != next.Stage || to.Receiver != receiver {
		if created {
			if _, err := t.tx.Exec(t.ctx, `WITH l AS (DELETE FROM leases WHERE queue = $1) DELETE FROM queues WHERE name = $1`, p.Queue); err != nil {
				return nil, fmt.Errorf("queue %s: %w", p.Queue, err)
			}
			delete(t.queues, p.Queue)
		}
		note := ""
		if to.Receiver != "" {
			note = ", receiver " + to.Receiver
		}
		return nil, domain.Invalidf("message %s (%s, %s) cannot move to queue %s (%s, %s%s)", p.ID, next.QoS, next.Stage,
			p.Queue, to.QoS, to.Stage, note)
	}
	nt := cloneQueue(to)
	var seq pgtype.Int8
	if next.Status != domain.StatusPEND {
		if next.Seq, err = t.nextSeq(nt); err != nil {
			return nil, err
		}
		seq = pgtype.Int8{Int64: int64(next.Seq), Valid: true}
	}
	uid, _ := parseID(p.ID)
	b := &pgx.Batch{}
	b.Queue(`UPDATE messages SET queue = $2, seq = $3, updated_at = $4, history = history || $5 WHERE id = $1`,
		uid, p.Queue, seq, next.UpdatedAt, appendHistory(nil, h))
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("message %s: move to %s: %w", p.ID, p.Queue, err)
	}
	from := cloneQueue(t.queues[cur.Queue])
	t.queues[cur.Queue], t.queues[p.Queue] = from, nt
	t.count(from, cur.Message, -1)
	t.count(nt, next, 1)
	t.ready(next)
	return next, nil
}
