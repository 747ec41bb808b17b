package admintest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testNodes: a store no engine serves lists no node and its queues have no
// owner; once a node joins and heartbeats, it is listed alive, holding
// every queue (it is the only node), with the in-flight count of its
// heartbeat, and it owns the queues; once it leaves, nothing is alive and
// nothing owned.
func testNodes(t *testing.T, b *bundle) {
	m := b.sendOne(t, eo("owned"))
	nodes, err := b.svc.Nodes(b.ctx)
	require.NoError(t, err)
	require.Empty(t, nodes)
	q, err := b.svc.Queue(b.ctx, m.Queue)
	require.NoError(t, err)
	require.Empty(t, q.Owner)

	eng, ok := b.st.(store.EngineStore)
	if !ok {
		return
	}
	joined, err := eng.Join(b.ctx, store.JoinParams{ID: "node-a", Address: "127.0.0.1:7870"})
	require.NoError(t, err)
	_, err = eng.Heartbeat(b.ctx, store.HeartbeatParams{Node: joined.Node, TTL: time.Minute, InFlight: 2})
	require.NoError(t, err)

	nodes, err = b.svc.Nodes(b.ctx)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	n := nodes[0]
	require.Equal(t, "node-a", n.ID)
	require.Equal(t, joined.Node.Incarnation, n.Incarnation)
	require.Equal(t, "127.0.0.1:7870", n.Address)
	require.True(t, n.Alive)
	require.Equal(t, 1, n.Queues)
	require.Equal(t, 2, n.InFlight)
	require.False(t, n.StartedAt.IsZero())
	require.False(t, n.HeartbeatAt.Before(n.StartedAt))
	require.Equal(t, time.UTC, n.HeartbeatAt.Location())
	q, err = b.svc.Queue(b.ctx, m.Queue)
	require.NoError(t, err)
	require.Equal(t, "node-a", q.Owner)
	var owners []string
	require.NoError(t, b.svc.Queues(b.ctx, admin.QueueFilter{}, func(q *domain.Queue) error {
		owners = append(owners, q.Owner)
		return nil
	}))
	require.Equal(t, []string{"node-a"}, owners)

	require.NoError(t, eng.Leave(b.ctx, joined.Node))
	nodes, err = b.svc.Nodes(b.ctx)
	require.NoError(t, err)
	for _, n := range nodes {
		require.False(t, n.Alive, "node %s left", n.ID)
	}
	q, err = b.svc.Queue(b.ctx, m.Queue)
	require.NoError(t, err)
	require.Empty(t, q.Owner)
}
