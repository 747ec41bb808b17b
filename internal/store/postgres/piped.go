package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipedTx is an engine transaction that spares round trips (§14): its
// BEGIN travels with its first batch of statements, writes whose results
// nothing in the transaction reads (Defer) travel with the next batch, and
// its COMMIT with its last writes. A claim that routes nothing then costs
// two round trips — BEGIN with the leases, the queues and the heads; the
// marks with COMMIT — and so does a batch of delivered outcomes with the
// claim that rides with it: the outcomes' reads travel with the claim's,
// their writes with its marks. Statements run in the order they were sent or
// deferred: whatever is pending goes first.
type pipedTx struct {
	conn *pgxpool.Conn
	// pending holds statements not sent yet: BEGIN, then deferred writes.
	pending *pgx.Batch
	// sent says BEGIN has gone out: the transaction must end.
	sent bool
}

const beginSQL = `BEGIN ISOLATION LEVEL READ COMMITTED`

// genericPlans makes the prepared statements of an engine transaction on
// the store's own pool run their generic plans, as the sessions of the
// engine's pool do (plans.go): left to choose, PostgreSQL plans the
// statements that take a list of ids (id = ANY($1), unnest($1)) again at
// every execution, a custom plan for one id looking cheaper than the
// generic one for a list, though both are the same primary-key lookups.
const genericPlans = `SET LOCAL plan_cache_mode = force_generic_plan`

// newPipedTx begins an engine transaction on conn; pinned says its session
// has the engine's settings already.
func newPipedTx(conn *pgxpool.Conn, pinned bool) *pipedTx {
	b := &pgx.Batch{}
	b.Queue(beginSQL)
	if !pinned {
		b.Queue(genericPlans)
	}
	return &pipedTx{conn: conn, pending: b}
}

// Defer queues b to go out with the next statements.
func (p *pipedTx) Defer(b *pgx.Batch) {
	p.pending = p.with(b)
}

// with returns the pending statements followed by b's, and clears them.
func (p *pipedTx) with(b *pgx.Batch) *pgx.Batch {
	if p.pending == nil {
		return b
	}
	nb := p.pending
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	p.pending = nil
	return nb
}

// flush sends what is pending, before a statement of its own.
func (p *pipedTx) flush(ctx context.Context) error {
	if p.pending == nil {
		return nil
	}
	p.sent = true
	return p.conn.SendBatch(ctx, p.with(&pgx.Batch{})).Close()
}

func (p *pipedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := p.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return p.conn.Exec(ctx, sql, args...)
}

func (p *pipedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.flush(ctx); err != nil {
		return nil, err
	}
	return p.conn.Query(ctx, sql, args...)
}

func (p *pipedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := p.flush(ctx); err != nil {
		return errRow{err}
	}
	return p.conn.QueryRow(ctx, sql, args...)
}

func (p *pipedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	p.sent = true
	return p.conn.SendBatch(ctx, p.with(b))
}

// commit sends b, what is pending before it, and COMMIT, in one round trip.
func (p *pipedTx) commit(ctx context.Context, b *pgx.Batch) error {
	if !p.sent && len(b.QueuedQueries) == 0 {
		return nil // nothing was sent: there is nothing to commit
	}
	var tag pgconn.CommandTag
	b.Queue(`COMMIT`).Exec(func(ct pgconn.CommandTag) error {
		tag = ct
		return nil
	})
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if tag.String() != "COMMIT" {
		// COMMIT of a transaction that failed rolls it back.
		return fmt.Errorf("the transaction was rolled back (%s)", tag)
	}
	p.sent = false
	return nil
}

// rollback ends a transaction that failed, if it began.
func (p *pipedTx) rollback(ctx context.Context) {
	if p.sent {
		_, _ = p.conn.Exec(ctx, `ROLLBACK`)
	}
}

// errRow is a row whose read failed before it was sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// deferWrites sends b with the transaction's next statements where the
// transaction allows, or now.
func (t *txn) deferWrites(b *pgx.Batch) error {
	x := t.tx.(*bufTx)
	if p, ok := x.q.(*pipedTx); ok {
		h, err := x.held()
		if err != nil {
			return err
		}
		if h != nil {
			p.Defer(h)
		}
		if len(b.QueuedQueries) > 0 {
			p.Defer(b)
		}
		return nil
	}
	if len(b.QueuedQueries) == 0 && t.pend.empty() {
		return nil
	}
	return t.tx.SendBatch(t.ctx, b).Close()
}

// engine runs fn in a write transaction on one connection, its statements
// pipelined (pipedTx), and commits it; after a deadlock or a serialization
// failure it runs fn again, as Update does. Commits counts it.
func (s *Store) engine(ctx context.Context, fn func(t *txn) error) error {
	return s.engineOn(ctx, s.pool, fn)
}

// engineOn is engine on a connection of pool: the store's own, or the
// engine's (Store.hot), whose sessions pin the plans of its claims and
// outcomes.
func (s *Store) engineOn(ctx context.Context, pool *pgxpool.Pool, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.retrying(ctx, func() error { return s.piped(ctx, pool, fn) })
}

func (s *Store) piped(ctx context.Context, pool *pgxpool.Pool, fn func(t *txn) error) (err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // a connection left in a transaction is closed
	p := newPipedTx(conn, pool == s.hot)
	defer func() {
		if err != nil {
			p.rollback(context.WithoutCancel(ctx))
		}
	}()
	t := newTxn(ctx, p, true)
	t.eo, t.codes = &s.eo, &s.codes
	if err := fn(t); err != nil {
		return err
	}
	b := &pgx.Batch{}
	if err := t.pend.drain(b); err != nil {
		return err
	}
	t.queueFlush(b)
	if err := p.commit(ctx, b); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return err
		}
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
