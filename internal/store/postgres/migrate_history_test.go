package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver goose runs on
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// A schema with the history table (version 6) keeps every entry, in order
// and to the microsecond, when migration 7 moves the history into the
// message rows.
func TestMigrationMovesHistoryIntoRows(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"),
		goose.WithTableName("queuectl_migrations"), goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 6)
	require.NoError(t, err)

	const id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	first := time.Date(2026, 11, 30, 9, 15, 1, 123456000, time.UTC)
	second := first.Add(1500 * time.Microsecond)
	_, err = db.ExecContext(ctx, `
		INSERT INTO payloads (id, refs, data) VALUES ('0190a1b2-0000-7000-8000-000000000001', 1, 'x');
		INSERT INTO messages (id, seq, size, payload_id, created_at, updated_at, queue, status, qos, stage, sender)
			VALUES ('`+id+`', 1, 1, '0190a1b2-0000-7000-8000-000000000001', now(), now(), 'Q', 'DLNG', 'EO', 'inbound', 'ERP');
		INSERT INTO history (message_id, n, at, from_status, to_status, node, actor, reason) VALUES
			('`+id+`', 2, '`+second.Format(time.RFC3339Nano)+`', 'TBDL', 'DLNG', 'node-ä', 'engine', 'delivery attempt 1 — über'),
			('`+id+`', 1, '`+first.Format(time.RFC3339Nano)+`', NULL, 'TBDL', NULL, 'sender', NULL)`)
	require.NoError(t, err)

	_, err = postgres.Migrate(ctx, u)
	require.NoError(t, err)
	st, err := postgres.Open(ctx, u, postgres.Options{})
	require.NoError(t, err)
	defer st.Close()
	var got []domain.HistoryEntry
	require.NoError(t, st.View(ctx, func(r store.Reader) error {
		got, err = r.History(id)
		return err
	}))
	require.Equal(t, []domain.HistoryEntry{
		{At: first, To: domain.StatusTBDL, Actor: "sender"},
		{At: second, From: domain.StatusTBDL, To: domain.StatusDLNG, Node: "node-ä", Actor: "engine",
			Reason: "delivery attempt 1 — über"},
	}, got)
	var tables int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'history'
		AND schemaname = current_schema()`).Scan(&tables))
	require.Zero(t, tables, "the history table is gone")
}
