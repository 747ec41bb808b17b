package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// backlog is how many ready messages the plan test loads into each of its
// queues after the engine's statements were planned on an empty store.
const backlog = 50_000

// buffersPerMessage bounds the shared buffers a claim or an outcome may
// touch per message it claims or records — the lookups of the message and
// of its payload, its row and the index entries of its new status — and
// buffersPerCall what a call touches whatever it claims or records: the
// node's row, its leases, the queues' rows. Neither grows with the backlog.
const (
	buffersPerMessage = 30
	buffersPerCall    = 100
)

// buffersFor is the most a call claiming or recording n messages may touch.
func buffersFor(n int) int64 { return int64(buffersPerCall + buffersPerMessage*n) }

// TestPlansDoNotDependOnTheStatistics plans the engine's statements on an
// empty store — as a node does at its first claim, before anything was
// sent — then loads a backlog of ready messages that no ANALYZE has seen,
// and counts the buffers a claim, a batch of outcomes and an EOIO step
// touch (pg_stat_statements, in a database of the test's own): they must
// grow with the messages claimed and recorded, not with the backlog.
func TestPlansDoNotDependOnTheStatistics(t *testing.T) {
	dbURL := pgtest.Database(t)
	ctx := context.Background()
	stats := statementStats(t, dbURL)
	// One connection: every call runs on the plans the first one made.
	st, err := postgres.Open(ctx, dbURL, postgres.Options{Migrate: true, MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	// No ANALYZE behind the test's back: the plans keep the statistics of
	// the empty store, as in a node whose backlog grew faster than
	// autovacuum looked.
	for _, table := range []string{"messages", "queues", "payloads", "leases", "nodes"} {
		require.NoError(t, pgExec(ctx, dbURL, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`))
	}

	joined, err := st.Join(ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
	require.NoError(t, err)
	node := joined.Node
	claimParams := func(limit int) store.ClaimParams {
		return store.ClaimParams{Node: node, Limit: limit, Window: 64, Candidates: store.CandidatesSkip,
			Receivers: storetest.Receivers}
	}
	eoParent, eoioParent := storetest.NewMessage(), storetest.NewEOIOMessage("ORDERS")
	newEO := func() *domain.Message { return storetest.NewOutboundMessage(eoParent, storetest.ReceiverWMS) }
	newEOIO := func() *domain.Message { return storetest.NewOutboundMessage(eoioParent, storetest.ReceiverWMS) }
	insert := func(msgs ...*domain.Message) {
		t.Helper()
		for len(msgs) > 0 {
			n := min(len(msgs), 1000)
			require.NoError(t, st.Update(ctx, func(w store.Writer) error {
				for _, m := range msgs[:n] {
					if err := w.Insert(m.Clone(), []byte("<order/>"), storetest.Entry("received")); err != nil {
						return err
					}
				}
				return nil
			}))
			msgs = msgs[n:]
		}
	}
	delivered := func(cs ...store.Claimed) []store.Outcome {
		var out []store.Outcome
		for _, c := range cs {
			out = append(out, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered})
		}
		return out
	}

	// The empty store: a claim, a batch of outcomes and an EOIO step plan
	// their statements on a message or two.
	insert(newEO(), newEOIO(), newEOIO())
	first, err := st.Claim(ctx, claimParams(32))
	require.NoError(t, err)
	require.Len(t, first.Claimed, 2)
	_, err = st.Record(ctx, store.RecordParams{Node: node, Outcomes: delivered(first.Claimed...)})
	require.NoError(t, err)
	step, err := st.Claim(ctx, claimParams(1))
	require.NoError(t, err)
	require.Len(t, step.Claimed, 1, "the EOIO queue's second message")
	cp := claimParams(1)
	_, err = st.Record(ctx, store.RecordParams{Node: node, Outcomes: delivered(step.Claimed...), Claim: &cp})
	require.NoError(t, err)

	// The backlog.
	var eo, ordered []*domain.Message
	for range backlog {
		eo, ordered = append(eo, newEO()), append(ordered, newEOIO())
	}
	insert(eo...)
	insert(ordered...)

	// A claim of 32.
	var claimed *store.ClaimResult
	used := stats.buffers(t, func() {
		claimed, err = st.Claim(ctx, claimParams(32))
		require.NoError(t, err)
	})
	require.Len(t, claimed.Claimed, 32)
	t.Logf("claim of %d: %d buffers", len(claimed.Claimed), used)
	assert.LessOrEqual(t, used, buffersFor(len(claimed.Claimed)), "a claim of %d messages touched %d buffers",
		len(claimed.Claimed), used)

	// Their outcomes.
	used = stats.buffers(t, func() {
		rec, err := st.Record(ctx, store.RecordParams{Node: node, Outcomes: delivered(claimed.Claimed...)})
		require.NoError(t, err)
		require.Empty(t, rec.Conflicts)
	})
	t.Logf("outcomes of %d: %d buffers", len(claimed.Claimed), used)
	assert.LessOrEqual(t, used, buffersFor(len(claimed.Claimed)), "%d outcomes touched %d buffers",
		len(claimed.Claimed), used)

	// The EOIO queue's head, alone.
	require.NoError(t, st.Update(ctx, func(w store.Writer) error { return w.SetStopped(eo[0].Queue, true) }))
	head, err := st.Claim(ctx, claimParams(1))
	require.NoError(t, err)
	require.Len(t, head.Claimed, 1)
	eoio := head.Claimed[0]
	require.Equal(t, domain.EOIO, eoio.Message.QoS)

	// An EOIO step: the head's outcome and the next head's claim.
	used = stats.buffers(t, func() {
		cp := claimParams(1)
		rec, err := st.Record(ctx, store.RecordParams{Node: node, Outcomes: delivered(eoio), Claim: &cp})
		require.NoError(t, err)
		require.Empty(t, rec.Conflicts)
		require.Len(t, rec.Claim.Claimed, 1, "the next head rides with the outcome")
		require.Equal(t, eoio.Message.Queue, rec.Claim.Claimed[0].Message.Queue)
	})
	t.Logf("EOIO step: %d buffers", used)
	assert.LessOrEqual(t, used, buffersFor(2), "an EOIO step touched %d buffers", used)
}

// stats reads pg_stat_statements for one database.
type stats struct {
	conn *pgx.Conn
	db   string
}

// statementStats connects to the server's base database, where it creates
// pg_stat_statements if need be, to read the statistics of the database
// of dbURL.
func statementStats(t *testing.T, dbURL string) *stats {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var loaded bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT 'pg_stat_statements' = ANY(string_to_array(current_setting('shared_preload_libraries'), ','))`).
		Scan(&loaded))
	require.True(t, loaded, "the plan test reads pg_stat_statements: start the server of %s with "+
		"shared_preload_libraries=pg_stat_statements", pgtest.EnvURL)
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		var pe *pgconn.PgError
		// Two tests creating it at once: one wins.
		require.True(t, errors.As(err, &pe) && pe.Code == "23505", "create pg_stat_statements: %v", err)
	}
	cfg, err := pgx.ParseConfig(dbURL)
	require.NoError(t, err)
	return &stats{conn: conn, db: cfg.Database}
}

// buffers returns how many shared buffers the statements fn ran in the
// database touched (hit or read).
func (s *stats) buffers(t *testing.T, fn func()) int64 {
	t.Helper()
	read := func() int64 {
		var n int64
		require.NoError(t, s.conn.QueryRow(context.Background(), `SELECT coalesce(sum(shared_blks_hit + shared_blks_read), 0)::int8
			FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`, s.db).Scan(&n))
		return n
	}
	before := read()
	fn()
	return read() - before
}

// pgExec runs one statement on a connection of its own.
func pgExec(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
