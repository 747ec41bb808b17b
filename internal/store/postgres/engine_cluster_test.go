package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// TestTwoEnginesDeliverEachMessageOnce runs two engines, each on a store
// of its own, on one database: they share the queues, and every message
// reaches the receiver exactly once; when one of them stops, the other
// delivers what is sent after.
func TestTwoEnginesDeliverEachMessageOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.URL(t)
	var mu sync.Mutex
	got := map[string]int{}
	arrived := make(chan struct{}, 1)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got[r.Header.Get("X-Queuectl-Message-Id")]++
		mu.Unlock()
		select {
		case arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(sink.Close)

	c, err := config.LoadFile("")
	require.NoError(t, err)
	c.Receivers = map[string]config.Receiver{"WMS": {Type: "http", URLs: []string{sink.URL + "/in"}, Timeout: 30 * time.Second}}
	c.Routes = nil
	c.Cluster.Heartbeat = 20 * time.Millisecond

	var stores []*postgres.Store
	for i := range 2 {
		st, err := postgres.Open(ctx, url, postgres.Options{Migrate: i == 0, MaxConns: 8})
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, st.Check(context.Background()))
			require.NoError(t, st.Close())
		})
		stores = append(stores, st)
	}
	require.NoError(t, stores[0].Update(ctx, func(w store.Writer) error {
		if err := w.SetParam(domain.Param{Name: placement.ParamEOInbound, Sub: domain.RoleCentral.Subparameter(), Value: 4}); err != nil {
			return err
		}
		return w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Sub: "WMS", Value: 6})
	}))
	type node struct {
		stop func()
		done chan error
	}
	var nodes []node
	for i, st := range stores {
		eng, err := engine.Configured(st, c, engine.Options{Config: engine.Config{NodeID: fmt.Sprintf("node-%d", i)},
			Logger: slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		require.NoError(t, err)
		runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		n := node{stop: stop, done: make(chan error, 1)}
		go func() { n.done <- eng.Run(runCtx) }()
		nodes = append(nodes, n)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.stop()
			<-n.done
		}
	})

	svc := local.New(stores[0], local.Options{Role: domain.RoleCentral, Actor: "test"})
	send := func(n int) []string {
		var reqs []domain.SendRequest
		for range n {
			reqs = append(reqs, domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Interface: "Test",
				Payload: []byte("<order/>")})
		}
		msgs, err := svc.Send(ctx, reqs)
		require.NoError(t, err)
		var ids []string
		for _, m := range msgs {
			ids = append(ids, m.ID)
		}
		return ids
	}
	// waitDelivered waits until n outbound messages arrived, and checks
	// that none arrived twice.
	waitDelivered := func(n int) {
		for {
			mu.Lock()
			k := len(got)
			for id, times := range got {
				require.Equal(t, 1, times, "message %s arrived once", id)
			}
			mu.Unlock()
			if k >= n {
				return
			}
			select {
			case <-arrived:
			case <-ctx.Done():
				t.Fatalf("%d of %d messages arrived", k, n)
			}
		}
	}
	send(200)
	waitDelivered(200)

	// One node stops cleanly: the other takes its queues at once.
	nodes[0].stop()
	require.NoError(t, <-nodes[0].done)
	nodes = nodes[1:]
	send(100)
	waitDelivered(300)
	mu.Lock()
	require.Len(t, got, 300)
	mu.Unlock()
}

// tlog writes the engines' warnings to the test's log.
type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}
