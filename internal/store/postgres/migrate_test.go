package postgres_test

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// exec runs one statement in the schema of url.
func exec(t testing.TB, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), sql)
	require.NoError(t, err)
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()

	// Three nodes starting at once: each migration is applied by one of
	// them, the others wait for the lock and find nothing left to do.
	const nodes = 3
	applied := make([][]postgres.Migration, nodes)
	errs := make([]error, nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { applied[i], errs[i] = postgres.Migrate(ctx, u) })
	}
	wg.Wait()
	var all []string
	for i := range nodes {
		require.NoError(t, errs[i], "node %d", i)
		for _, m := range applied[i] {
			all = append(all, m.Name)
		}
	}
	status, err := postgres.MigrationStatus(ctx, u)
	require.NoError(t, err)
	require.NotEmpty(t, status)
	var known []string
	for _, m := range status {
		require.True(t, m.Applied, "migration %s", m.Name)
		require.NotNil(t, m.AppliedAt)
		known = append(known, m.Name)
	}
	require.ElementsMatch(t, known, all, "every migration applied exactly once")

	again, err := postgres.Migrate(ctx, u)
	require.NoError(t, err)
	require.Empty(t, again, "a current schema needs nothing")

	st, err := postgres.Open(ctx, u, postgres.Options{})
	require.NoError(t, err, "a migrated schema opens without migrating")
	require.NoError(t, st.Close())
}

func TestMigrationStatusChangesNothing(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	status, err := postgres.MigrationStatus(context.Background(), u)
	require.NoError(t, err)
	require.NotEmpty(t, status)
	require.Equal(t, int64(1), status[0].Version)
	require.Equal(t, "00001_schema.sql", status[0].Name)
	for _, m := range status {
		require.False(t, m.Applied, "migration %s", m.Name)
		require.Nil(t, m.AppliedAt)
	}
	// The status of a fresh schema creates no table in it.
	_, err = postgres.Open(context.Background(), u, postgres.Options{})
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "has no queuectl schema")
	require.Contains(t, domain.HintOf(err), "queuectl migrate")
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	_, err := postgres.Migrate(ctx, u)
	require.NoError(t, err)
	exec(t, u, `INSERT INTO queuectl_migrations (version_id, is_applied) VALUES (9999, true)`)

	_, err = postgres.Open(ctx, u, postgres.Options{})
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "is at version 9999")
	require.Contains(t, domain.HintOf(err), "newer queuectl")
	_, err = postgres.Migrate(ctx, u)
	require.ErrorContains(t, err, "is at version 9999", "migrate leaves a newer schema alone")
}

func TestOpenNamesAMissingSchema(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.BaseURL(t))
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", "queuectl_no_such_schema")
	u.RawQuery = q.Encode()
	for name, open := range map[string]func() error{
		"migrate": func() error { _, err := postgres.Migrate(context.Background(), u.String()); return err },
		"open": func() error {
			_, err := postgres.Open(context.Background(), u.String(), postgres.Options{})
			return err
		},
	} {
		err := open()
		require.ErrorIs(t, err, domain.ErrUnavailable, name)
		require.ErrorContains(t, err, "search_path", name)
	}
}
