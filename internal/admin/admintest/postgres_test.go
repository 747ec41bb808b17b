package admintest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/admintest"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// TestLocalPostgres runs the suite on a local service over a PostgreSQL
// store, as admin commands with --store postgres://… use it.
func TestLocalPostgres(t *testing.T) {
	t.Parallel()
	pgtest.BaseURL(t)
	admintest.Run(t, func(t *testing.T) (admin.Service, store.Store) {
		return newLocalPostgres(t)
	})
}

// TestRemotePostgres runs the suite through the HTTP API of a server whose
// service is on a PostgreSQL store.
func TestRemotePostgres(t *testing.T) {
	t.Parallel()
	pgtest.BaseURL(t)
	admintest.Run(t, func(t *testing.T) (admin.Service, store.Store) {
		svc, st := newLocalPostgres(t)
		api := httpapi.New(httpapi.Options{Service: svc, Auditor: svc, MaxPayload: admintest.MaxPayload})
		srv := httptest.NewServer(api.Handler(true))
		t.Cleanup(srv.Close)
		c, err := remote.New(remote.Options{Server: srv.URL})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		return c, st
	})
}

// newLocalPostgres returns a local service on a store of its own, and the
// store; it is checked and closed when the test ends.
func newLocalPostgres(t *testing.T) (*local.Service, store.Store) {
	t.Helper()
	st := pgtest.Open(t)
	return local.New(st, local.Options{MaxPayload: admintest.MaxPayload, Receivers: admintest.Receivers}), st
}
