package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestCheckStore runs the check-back suite with nodes and leases written as
// rows: a node is a row of nodes, holding a queue a row of leases, a new
// incarnation of a node id lets the leases of the older ones expire.
func TestCheckStore(t *testing.T) {
	t.Parallel()
	storetest.RunChecks(t, func(t *testing.T) *storetest.CheckRig {
		b := setup(t)
		return &storetest.CheckRig{Store: b.st, Checks: b.st, Join: b.join, Hold: b.hold}
	})
}

// join starts a new incarnation of node id.
func (b *testBundle) join(t *testing.T, id string) store.Node {
	t.Helper()
	n := store.Node{ID: id}
	require.NoError(t, b.conn.QueryRow(b.ctx, `WITH fenced AS (
			UPDATE leases SET expires_at = now() WHERE node = $1 AND expires_at > now())
		INSERT INTO nodes (id, address) VALUES ($1, '') RETURNING incarnation`, id).Scan(&n.Incarnation))
	return n
}

// hold gives n the leases of the queues nobody holds, unless a newer
// incarnation of its id joined.
func (b *testBundle) hold(t *testing.T, n store.Node) {
	t.Helper()
	_, err := b.conn.Exec(b.ctx, `INSERT INTO leases (queue, node, incarnation, epoch, expires_at)
		SELECT name, $1, $2, 1, now() + interval '1 hour' FROM queues
		WHERE $2 = (SELECT max(incarnation) FROM nodes WHERE id = $1)
		ON CONFLICT (queue) DO UPDATE SET node = EXCLUDED.node, incarnation = EXCLUDED.incarnation,
			epoch = leases.epoch + 1, expires_at = EXCLUDED.expires_at
		WHERE leases.expires_at <= now()`, n.ID, int64(n.Incarnation))
	require.NoError(t, err)
}
