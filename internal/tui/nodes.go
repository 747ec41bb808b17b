package tui

import (
	"context"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// nodesSource lists the nodes serving the store, as node list does; a
// cluster has few, so one page.
type nodesSource struct{ now func() time.Time }

func (nodesSource) storeFilter() bool { return false }

func (nodesSource) columns() []components.Column {
	return []components.Column{col("NODE", 20), col("ADDRESS", 24), col("STATE", 9), optional("STARTED", 7, 2),
		col("HEARTBEAT", 9), col("QUEUES", 6), col("IN FLIGHT", 9), optional("INCARNATION", 11, 1)}
}

func (s nodesSource) fetch(ctx context.Context, svc admin.Service, _ pageQuery) ([]item, string, error) {
	nodes, err := svc.Nodes(ctx)
	if err != nil {
		return nil, "", err
	}
	items := make([]item, 0, len(nodes))
	for _, n := range nodes {
		state := dash(n.State)
		inc := strconv.FormatUint(n.Incarnation, 10)
		items = append(items, item{key: n.ID + "/" + inc, cells: []string{n.ID, dash(n.Address), state,
			output.Age(&n.StartedAt, s.now()), output.Age(&n.HeartbeatAt, s.now()), strconv.Itoa(n.Queues),
			strconv.Itoa(n.InFlight), inc}})
	}
	return items, "", nil
}
