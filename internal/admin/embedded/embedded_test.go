package embedded

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

type testBundle struct {
	ctx  context.Context
	path string
	svc  *Service
	// waits gets a token each time a call finds the store held and no
	// socket answering, before it waits.
	waits chan struct{}
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{ctx: context.Background(), path: filepath.Join(t.TempDir(), "q.db"), waits: make(chan struct{}, 1)}
	b.svc = b.service("local:alice")
	return b
}

// service returns another embedded service on the same store, as another
// process would have: it contends for the file lock like one.
func (b *testBundle) service(actor string) *Service {
	return New(Options{Path: b.path, Create: true, Local: local.Options{Actor: actor}, Socket: testSocket{}, waiting: func() {
		select {
		case b.waits <- struct{}{}:
		default:
		}
	}})
}

func (b *testBundle) send(t *testing.T, n int) []*domain.Message {
	t.Helper()
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("x")}
	}
	sent, err := b.svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	return admin.SentMessages(sent)
}

// TestHoldsOnlyDuringACall: between calls nothing is held, no socket served.
func TestHoldsOnlyDuringACall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, 1)
	require.NoFileExists(t, b.path+".sock")
	st, err := bolt.Open(b.path, bolt.Options{Timeout: time.Nanosecond})
	require.NoError(t, err, "the store is free between calls")
	require.NoError(t, st.Close())
}

// TestWaitsForAHolderWithoutSocket: a store held by a process that serves
// no socket is waited for, and the call goes on once it is let go.
func TestWaitsForAHolderWithoutSocket(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, 3)
	other, err := bolt.Open(b.path, bolt.Options{})
	require.NoError(t, err)

	done := make(chan error, 1)
	var n int
	go func() {
		done <- b.svc.Messages(b.ctx, admin.MessageFilter{}, func(*domain.Message) error { n++; return nil })
	}()
	<-b.waits // the call found the store held, and waits
	require.NoError(t, other.Close())
	require.NoError(t, <-done)
	require.Equal(t, 3, n)
}

// TestGivesUpAfterTheWait: a holder that does not let go is reported as
// such (exit 6), after the context's deadline.
func TestGivesUpAfterTheWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, 1)
	other, err := bolt.Open(b.path, bolt.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, other.Close()) })

	ctx, cancel := context.WithTimeout(b.ctx, 100*time.Millisecond)
	defer cancel()
	_, err = b.svc.Tuning(ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.EqualError(t, err, "the store "+b.path+" is in use by another process")
	require.Contains(t, domain.HintOf(err), "serves no socket")
}

// TestThroughTheHoldersSocket: while another holder holds the store, calls
// go through the socket it serves, as the operator who made them.
func TestThroughTheHoldersSocket(t *testing.T) {
	t.Parallel()
	b := setup(t)
	msgs := b.send(t, 2)
	holder := b.service("local:tui")
	_, err := holder.hold()
	require.NoError(t, err)
	require.FileExists(t, b.path+".sock")
	fi, err := os.Stat(b.path + ".sock")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	var ids []string
	require.NoError(t, b.svc.Messages(b.ctx, admin.MessageFilter{}, func(m *domain.Message) error {
		ids = append(ids, m.ID)
		return nil
	}))
	require.Equal(t, []string{msgs[0].ID, msgs[1].ID}, ids)
	res, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{msgs[0].Queue}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Changed)
	var actors []string
	require.NoError(t, b.svc.Audit(b.ctx, admin.AuditFilter{}, func(e *domain.AuditEntry) error {
		actors = append(actors, e.Actor+" "+e.Source)
		return nil
	}))
	require.Equal(t, []string{"local:alice unix"}, actors, "the operator, not the socket, acted")
	id, err := b.svc.WhoAmI(b.ctx)
	require.NoError(t, err)
	require.Equal(t, "local:alice", id.Name, "the socket answers for the operator")
	require.Equal(t, admin.RoleAdmin, id.Role)
	require.True(t, id.May("tune set"))

	holder.release()
	require.NoFileExists(t, b.path+".sock", "the socket goes with the hold")
}

// TestWalkLetsGoBetweenPages: a walk's function runs with the store let
// go, so that it may wait — on a full pipe — for another process that
// needs the store.
func TestWalkLetsGoBetweenPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, pageSize+5)
	n := 0
	require.NoError(t, b.svc.Messages(b.ctx, admin.MessageFilter{}, func(*domain.Message) error {
		if n++; n == 1 || n == pageSize+1 {
			st, err := bolt.Open(b.path, bolt.Options{Timeout: time.Nanosecond})
			require.NoError(t, err, "item %d: the store is free while the page is handed out", n)
			require.NoError(t, st.Close())
		}
		return nil
	}))
	require.Equal(t, pageSize+5, n)

	// A limit and an early stop end the walk.
	n = 0
	require.NoError(t, b.svc.Messages(b.ctx, admin.MessageFilter{Limit: pageSize + 2}, func(*domain.Message) error { n++; return nil }))
	require.Equal(t, pageSize+2, n)
	n = 0
	require.NoError(t, b.svc.Messages(b.ctx, admin.MessageFilter{}, func(*domain.Message) error {
		if n++; n == 3 {
			return admin.ErrStop
		}
		return nil
	}))
	require.Equal(t, 3, n)
}

// TestNotAStore: a file that is not a queuectl store is refused, not waited on.
func TestNotAStore(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, os.WriteFile(b.path, []byte("not a database at all, but long enough to look at")[:40], 0o600))
	_, err := b.svc.Tuning(b.ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "is not a queuectl store")
	require.Contains(t, domain.HintOf(err), "point --db at the right file")
}

// TestOtherLayoutVersion: a store of another layout version is refused at
// once with what to do, not waited on as if it were held.
func TestOtherLayoutVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	db, err := bbolt.Open(b.path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		if err := meta.Put([]byte("format"), []byte("queuectl")); err != nil {
			return err
		}
		return meta.Put([]byte("version"), binary.BigEndian.AppendUint32(nil, 99))
	}))
	require.NoError(t, db.Close())

	_, err = b.svc.Tuning(b.ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "written by a newer queuectl")
	require.Empty(t, b.waits, "refused at once, not waited on")
}

// testSocket serves the HTTP API on the socket, as the commands' wiring
// (cmdutil.SocketAPI) does.
type testSocket struct{}

func (testSocket) Listen(path string) (net.Listener, error) {
	ln, err := httpapi.ListenSocket(path)
	if err != nil {
		return nil, err
	}
	return ln, nil
}

func (testSocket) Handler(svc *local.Service) http.Handler {
	return httpapi.New(httpapi.Options{Service: svc, Auditor: svc}).Handler(true)
}
