package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestNodes reads nodes and leases rows as the cluster writes them: a live
// node holding a lease, a dead one still to recover whose lease expired, a
// node that stopped a moment ago, and one that stopped long ago (not
// listed); the owner of a queue is the node of its unexpired lease.
func TestNodes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	held := storetest.NewMessage()
	lapsed := storetest.InQueue(storetest.NewMessage(), domain.EOInboundQueue(domain.RoleCentral, 1))
	free := storetest.InQueue(storetest.NewMessage(), domain.EOInboundQueue(domain.RoleCentral, 2))
	b.insert(t, held, lapsed, free)
	// A node's expires_at is its last heartbeat plus its lease TTL.
	_, err := b.conn.Exec(b.ctx, `INSERT INTO nodes (id, address, started_at, heartbeat_at, expires_at, in_flight, stopped_at) VALUES
		('alpha', '10.0.0.1:7870', now() - interval '1 minute', now(), now() + interval '10 seconds', 4, NULL),
		('beta', '10.0.0.2:7870', now() - interval '3 hours', now() - interval '2 hours', now() - interval '2 hours' + interval '10 seconds', 2, NULL),
		('gamma', '10.0.0.3:7870', now() - interval '2 hours', now() - interval '30 seconds', now() - interval '20 seconds', 0, now() - interval '30 seconds'),
		('gamma', '10.0.0.3:7870', now() - interval '9 hours', now() - interval '8 hours', now() - interval '8 hours', 0, now() - interval '8 hours')`)
	require.NoError(t, err)
	_, err = b.conn.Exec(b.ctx, `INSERT INTO leases (queue, node, incarnation, epoch, expires_at)
		SELECT $1, id, incarnation, 3, now() + interval '10 seconds' FROM nodes WHERE id = 'alpha'
		UNION ALL
		SELECT $2, id, incarnation, 5, now() - interval '2 hours' FROM nodes WHERE id = 'beta'
		ON CONFLICT (queue) DO UPDATE SET node = excluded.node, incarnation = excluded.incarnation, epoch = excluded.epoch,
			expires_at = excluded.expires_at`, held.Queue, lapsed.Queue)
	require.NoError(t, err)

	nodes, err := b.st.Nodes(b.ctx, store.NodesParams{TTL: 10 * time.Second, Keep: time.Hour})
	require.NoError(t, err)
	require.Len(t, nodes, 3)
	alpha, beta, gamma := nodes[0], nodes[1], nodes[2]
	require.Equal(t, "alpha", alpha.ID)
	require.Equal(t, "10.0.0.1:7870", alpha.Address)
	require.True(t, alpha.Alive)
	require.Equal(t, 1, alpha.Queues)
	require.Equal(t, 4, alpha.InFlight)
	require.Less(t, alpha.StartedAt, alpha.HeartbeatAt)
	require.Equal(t, "beta", beta.ID, "dead and not recovered: listed however old")
	require.False(t, beta.Alive)
	require.Equal(t, store.NodeDead, beta.State)
	require.Zero(t, beta.Queues, "its lease expired")
	require.Equal(t, 2, beta.InFlight)
	require.Equal(t, "gamma", gamma.ID, "the incarnation that stopped a moment ago; not the one of 8 hours ago")
	require.False(t, gamma.Alive, "stopped, though its heartbeat is recent")
	require.Equal(t, store.NodeStopped, gamma.State)
	require.Zero(t, gamma.InFlight)
	require.Equal(t, store.NodeAlive, alpha.State)
	require.Greater(t, gamma.Incarnation, beta.Incarnation)

	owners := map[string]string{}
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			owners[q.Name] = q.Owner
			return nil
		})
	}))
	require.Equal(t, map[string]string{held.Queue: "alpha", lapsed.Queue: "", free.Queue: ""}, owners)
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		q, err := r.Queue(held.Queue)
		require.Equal(t, "alpha", q.Owner)
		require.Equal(t, uint64(3), q.Epoch)
		return err
	}))
}
