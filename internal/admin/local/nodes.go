package local

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/store"
)

// DefaultLeaseTTL is cluster.lease_ttl's default (§11).
const DefaultLeaseTTL = 10 * time.Second

// nodesKeep is how long a node that stopped, or died and was recovered,
// stays in node list after its last heartbeat.
const nodesKeep = time.Hour

// Nodes lists the nodes serving the store. A store that cannot tell has
// none to list.
func (s *Service) Nodes(ctx context.Context) ([]admin.Node, error) {
	lister, ok := s.st.(store.NodeLister)
	if !ok {
		return []admin.Node{}, nil
	}
	infos, err := lister.Nodes(ctx, store.NodesParams{TTL: s.opts.LeaseTTL, Keep: nodesKeep})
	if err != nil {
		return nil, err
	}
	out := make([]admin.Node, 0, len(infos))
	for _, n := range infos {
		out = append(out, admin.Node{ID: n.ID, Incarnation: n.Incarnation, Address: n.Address,
			StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt, Alive: n.Alive, State: n.State, Queues: n.Queues, InFlight: n.InFlight})
	}
	return out, nil
}
