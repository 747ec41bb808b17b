package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/store"
)

var _ store.NodeLister = (*Store)(nil)

// nodesQuery lists the incarnations `node list` shows, on the database
// clock: those neither stopped nor recovered (alive, or dead with crash
// recovery still to run), and the others whose last heartbeat is within
// $1 microseconds. An incarnation is alive while it is unsettled and its
// last heartbeat's expiry (its time plus the node's cluster.lease_ttl) lies
// ahead — the rule that fences the node's writes; its queues are the leases
// it holds that have not expired. One that left or was recovered has
// nothing in flight any more, whatever its last heartbeat said.
const nodesQuery = `SELECT n.incarnation, n.id, n.address, n.started_at, n.heartbeat_at,
	CASE WHEN n.stopped_at IS NULL AND n.recovered_at IS NULL THEN n.in_flight ELSE 0 END,
	n.stopped_at IS NULL AND n.recovered_at IS NULL AND n.fenced_at IS NULL AND n.expires_at > now(),
	(SELECT count(*) FROM leases l WHERE l.incarnation = n.incarnation AND l.expires_at > now()),
	CASE WHEN n.stopped_at IS NOT NULL THEN 'stopped' WHEN n.recovered_at IS NOT NULL THEN 'recovered'
		WHEN n.fenced_at IS NULL AND n.expires_at > now() THEN 'alive' ELSE 'dead' END,
	n.receivers
FROM nodes n
WHERE (n.stopped_at IS NULL AND n.recovered_at IS NULL)
	OR n.heartbeat_at > now() - $1 * interval '1 microsecond'
ORDER BY n.id, n.incarnation`

// Nodes lists the nodes of the cluster from its nodes and leases rows.
func (s *Store) Nodes(ctx context.Context, p store.NodesParams) ([]store.NodeInfo, error) {
	var out []store.NodeInfo
	err := s.View(ctx, func(r store.Reader) error {
		t := r.(*txn)
		rows, err := t.tx.Query(ctx, nodesQuery, p.Keep.Microseconds())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.NodeInfo, error) {
			var n store.NodeInfo
			var incarnation, queues int64
			var inFlight int32
			err := row.Scan(&incarnation, &n.ID, &n.Address, &n.StartedAt, &n.HeartbeatAt, &inFlight, &n.Alive, &queues, &n.State,
				&n.Receivers)
			n.Incarnation, n.Queues, n.InFlight = uint64(incarnation), int(queues), int(inFlight)
			n.StartedAt, n.HeartbeatAt = n.StartedAt.UTC(), n.HeartbeatAt.UTC()
			return n, err
		})
		return err
	})
	return out, err
}
