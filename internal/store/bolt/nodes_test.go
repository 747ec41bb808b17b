package bolt

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestNodes follows the one node of an embedded store: none until an
// engine joins, then the joined incarnation holding every queue, its
// heartbeat's in-flight count, and none again once it leaves.
func TestNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTestStore(t)
	a, b := storetest.NewMessage(), storetest.InQueue(storetest.NewMessage(), domain.EOInboundQueue(domain.RoleCentral, 1))
	require.NoError(t, s.Update(ctx, func(w store.Writer) error {
		for _, m := range []*domain.Message{a, b} {
			if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
				return err
			}
		}
		return nil
	}))
	params := store.NodesParams{TTL: time.Hour, Keep: time.Hour}
	owners := func() []string {
		var out []string
		require.NoError(t, s.View(ctx, func(r store.Reader) error {
			return r.Queues("", func(q *store.QueueRecord) error {
				out = append(out, q.Owner)
				return nil
			})
		}))
		return out
	}

	nodes, err := s.Nodes(ctx, params)
	require.NoError(t, err)
	require.Empty(t, nodes)
	require.Equal(t, []string{"", ""}, owners())

	joined, err := s.Join(ctx, store.JoinParams{ID: "n1", Address: "/tmp/q.db.sock"})
	require.NoError(t, err)
	_, err = s.Heartbeat(ctx, store.HeartbeatParams{Node: joined.Node, TTL: time.Hour, InFlight: 3})
	require.NoError(t, err)
	nodes, err = s.Nodes(ctx, params)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	n := nodes[0]
	require.Equal(t, "n1", n.ID)
	require.Equal(t, joined.Node.Incarnation, n.Incarnation)
	require.Equal(t, "/tmp/q.db.sock", n.Address)
	require.True(t, n.Alive)
	require.Equal(t, 2, n.Queues)
	require.Equal(t, 3, n.InFlight)
	require.False(t, n.HeartbeatAt.Before(n.StartedAt))
	require.Equal(t, []string{"n1", "n1"}, owners())
	require.NoError(t, s.View(ctx, func(r store.Reader) error {
		q, err := r.Queue(a.Queue)
		require.Equal(t, "n1", q.Owner)
		return err
	}))

	require.NoError(t, s.Leave(ctx, joined.Node))
	nodes, err = s.Nodes(ctx, params)
	require.NoError(t, err)
	require.Empty(t, nodes)
	require.Equal(t, []string{"", ""}, owners())
}
