package admintest_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/admintest"
	"github.com/queuectl/queuectl/internal/admin/embedded"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

func TestLocal(t *testing.T) {
	t.Parallel()
	admintest.Run(t, func(t *testing.T) (admin.Service, store.Store) {
		return newLocal(t)
	})
}

// TestRemoteSocket runs the suite through the HTTP API as the unix socket
// serves it: trusted, every request allowed.
func TestRemoteSocket(t *testing.T) {
	t.Parallel()
	admintest.Run(t, newRemote)
}

func newLocal(t *testing.T) (*local.Service, store.Store) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{MaxPayload: admintest.MaxPayload, Receivers: admintest.Receivers})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	return svc, st
}

// newRemote returns a remote client of a server on a local service,
// together with that service's store.
func newRemote(t *testing.T) (admin.Service, store.Store) {
	t.Helper()
	svc, st := newLocal(t)
	api := httpapi.New(httpapi.Options{Service: svc, Auditor: svc, MaxPayload: admintest.MaxPayload})
	srv := httptest.NewServer(api.Handler(true))
	t.Cleanup(srv.Close)
	c, err := remote.New(remote.Options{Server: srv.URL})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c, st
}

// TestErrorKindsCrossTheWire checks that every kind of error, its text and
// its hint reach the remote caller as the service returned them.
func TestErrorKindsCrossTheWire(t *testing.T) {
	t.Parallel()
	for _, kind := range []error{domain.ErrInvalid, domain.ErrTooLarge, domain.ErrNotFound, domain.ErrConflict,
		domain.ErrUnavailable, domain.ErrPermission} {
		t.Run(kind.Error(), func(t *testing.T) {
			t.Parallel()
			want := domain.WithHint(kind, "message 0193: status is DLVD, resend needs NDLV or WAIT", "try message show")
			c := newRemoteOver(t, failing{admin.Service(nil), want})
			_, err := c.Message(context.Background(), "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f")
			require.ErrorIs(t, err, kind)
			require.EqualError(t, err, want.Error())
			require.Equal(t, "try message show", domain.HintOf(err))
		})
	}
}

// failing is a service whose Message fails with err.
type failing struct {
	admin.Service
	err error
}

func (f failing) Message(context.Context, string) (*domain.Message, error) { return nil, f.err }

func newRemoteOver(t *testing.T, svc admin.Service) *remote.Client {
	t.Helper()
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Service: svc}).Handler(true))
	t.Cleanup(srv.Close)
	c, err := remote.New(remote.Options{Server: srv.URL})
	require.NoError(t, err)
	return c
}

// TestEmbedded runs the suite on the service of embedded mode, which holds
// the store only while a call reads or writes it.
func TestEmbedded(t *testing.T) {
	t.Parallel()
	admintest.Run(t, func(t *testing.T) (admin.Service, store.Store) {
		path := filepath.Join(t.TempDir(), "q.db")
		svc := embedded.New(embedded.Options{Path: path, Create: true,
			Local:  local.Options{MaxPayload: admintest.MaxPayload, Receivers: admintest.Receivers},
			Socket: cmdutil.SocketAPI{MaxPayload: admintest.MaxPayload}})
		t.Cleanup(func() { require.NoError(t, svc.Close()) })
		return svc, fileStore{path: path}
	})
}

// fileStore is the store of a file, opened for each transaction, as another
// process using it between the service's calls would.
type fileStore struct{ path string }

func (s fileStore) open() (*bolt.Store, error) { return bolt.Open(s.path, bolt.Options{}) }

func (s fileStore) View(ctx context.Context, fn func(store.Reader) error) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	defer st.Close()
	return st.View(ctx, fn)
}

func (s fileStore) Update(ctx context.Context, fn func(store.Writer) error) error {
	st, err := s.open()
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Update(ctx, fn)
}

func (fileStore) Commits() uint64 { return 0 }
func (fileStore) Close() error    { return nil }
