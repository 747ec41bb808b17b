package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// A database from before receiver codes keeps its queue names: each
// receiver gets the code its outbound queues carry, and a receiver that
// shared another's queues gets a code of its own at its next message.
func TestMigrationKeepsTheQueueNamesOfAStoreBeforeReceiverCodes(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"),
		goose.WithTableName("queuectl_migrations"), goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 18)
	require.NoError(t, err)
	shared := domain.Code4("RCV0") // RCV1450's too
	at := time.Date(2026, 11, 30, 9, 15, 1, 0, time.UTC)
	_, err = db.ExecContext(ctx, `INSERT INTO queues (name, qos, stage, receiver, created_at) VALUES
		($1, 'EO', 'outbound', 'RCV1450', $4), ($2, 'EOIO', 'outbound', 'RCV1450', $4),
		($3, 'EO', 'outbound', 'WMS', $4), ('XBTI0000', 'EO', 'inbound', NULL, $4)`,
		"XBTO"+shared, "XBQO"+shared+"ORDERS", "XBTO"+domain.Code4("WMS")+"0003", at)
	require.NoError(t, err)

	_, err = postgres.Migrate(ctx, u)
	require.NoError(t, err)
	st, err := postgres.Open(ctx, u, postgres.Options{})
	require.NoError(t, err)
	defer st.Close()
	got := map[string]string{}
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		if err := w.ReceiverCodes(func(rc, code string) error { got[rc] = code; return nil }); err != nil {
			return err
		}
		code, err := store.AssignCode(w, "RCV0")
		got["RCV0"] = code
		return err
	}))
	require.Equal(t, map[string]string{"RCV1450": shared, "WMS": domain.Code4("WMS"), "RCV0": domain.NextCode(shared)}, got)
}
