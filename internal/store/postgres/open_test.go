package postgres_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// closedPort returns a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	u := fmt.Sprintf("postgres://queuectl:s3cret@127.0.0.1:%d/queuectl?sslmode=disable", closedPort(t))
	for name, open := range map[string]func() error{
		"open":    func() error { _, err := postgres.Open(context.Background(), u, postgres.Options{}); return err },
		"migrate": func() error { _, err := postgres.Migrate(context.Background(), u); return err },
		"status":  func() error { _, err := postgres.MigrationStatus(context.Background(), u); return err },
	} {
		err := open()
		require.ErrorIs(t, err, domain.ErrUnavailable, name)
		require.ErrorContains(t, err, "cannot connect to the PostgreSQL database postgres://queuectl:REDACTED@127.0.0.1", name)
		require.ErrorContains(t, err, "connection refused", name)
		require.NotContains(t, err.Error(), "s3cret", name)
		require.Contains(t, domain.HintOf(err), "PostgreSQL is running", name)
	}
}

func TestOpenMalformedURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"postgres://queuectl:s3cret@db.example:port/queuectl",
		"postgres://queuectl:s3cret@db.example/queuectl?sslmode=sometimes",
	} {
		_, err := postgres.Open(context.Background(), u, postgres.Options{})
		require.ErrorIs(t, err, domain.ErrInvalid, u)
		require.ErrorContains(t, err, "is not a PostgreSQL connection URL", u)
		require.NotContains(t, err.Error(), "s3cret", u)
	}
}

func TestOpenUnknownDatabase(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.BaseURL(t))
	require.NoError(t, err)
	u.Path = "/queuectl_no_such_database"
	_, err = postgres.Open(context.Background(), u.String(), postgres.Options{})
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, `database "queuectl_no_such_database" does not exist`)
}
