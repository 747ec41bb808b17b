package tui

import (
	"context"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/queuectl/queuectl/internal/admin"
)

// clusterService is a service whose store has a cluster of nodes.
type clusterService struct {
	admin.Service
	nodes []admin.Node
}

func (s clusterService) Nodes(context.Context) ([]admin.Node, error) { return s.nodes, nil }

// testNodes are a live node and one that died.
var testNodes = []admin.Node{
	{ID: "node-a", Incarnation: 12, Address: "10.0.0.1:7870", StartedAt: now.Add(-26 * time.Hour),
		HeartbeatAt: now.Add(-time.Second), Alive: true, State: "alive", Queues: 1204, InFlight: 17},
	{ID: "node-b", Incarnation: 9, Address: "10.0.0.2:7870", StartedAt: now.Add(-3 * time.Hour),
		HeartbeatAt: now.Add(-4 * time.Minute), Alive: false, State: "recovered", Queues: 0, InFlight: 3},
}

// TestNodesView: 5 shows the nodes serving the store, a live one and one
// that died, with their heartbeats' age, queues held and in-flight count.
func TestNodesView(t *testing.T) {
	t.Parallel()
	b := setup(t)
	svc := clusterService{Service: b.svc, nodes: testNodes}
	tm := start(t, options(svc), 120, 12)
	press(tm, "5")
	waitFor(t, tm, "node-b")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(m.View()))
}
