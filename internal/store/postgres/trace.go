package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// tracer counts what the store's connections send (bench -o json): every
// statement, and every round trip — a statement sent on its own (BEGIN and
// COMMIT too) is one, and so is a batch, whose statements travel together.
type tracer struct {
	roundTrips, statements atomic.Uint64
}

var (
	_ pgx.QueryTracer = (*tracer)(nil)
	_ pgx.BatchTracer = (*tracer)(nil)
)

func (r *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.roundTrips.Add(1)
	r.statements.Add(1)
	return ctx
}

func (*tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	r.roundTrips.Add(1)
	if data.Batch != nil {
		r.statements.Add(uint64(len(data.Batch.QueuedQueries)))
	}
	return ctx
}

func (*tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (*tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
