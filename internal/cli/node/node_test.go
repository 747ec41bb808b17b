package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/output"
)

// nodesAdmin lists fixed nodes.
type nodesAdmin struct {
	admin.Service
	nodes []admin.Node
}

func (a *nodesAdmin) Nodes(context.Context) ([]admin.Node, error) { return a.nodes, nil }

type testBundle struct {
	opts  *ListOptions
	out   *bytes.Buffer
	hints []string
	adm   *nodesAdmin
}

func setup(t *testing.T, format output.Format, embedded bool) *testBundle {
	t.Helper()
	b := &testBundle{out: &bytes.Buffer{}, adm: &nodesAdmin{}}
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	b.opts = &ListOptions{
		IO:       &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: b.out, ErrOut: io.Discard},
		Admin:    func() (admin.Service, error) { return b.adm, nil },
		Format:   func() (output.Format, error) { return format, nil },
		Hintf:    func(f string, args ...any) { b.hints = append(b.hints, fmt.Sprintf(f, args...)) },
		Embedded: func() bool { return embedded },
		Now:      func() time.Time { return now },
	}
	b.adm.nodes = []admin.Node{
		{ID: "node-a", Incarnation: 7, Address: "10.0.0.1:7870", StartedAt: now.Add(-3 * time.Hour),
			HeartbeatAt: now.Add(-time.Second), Alive: true, State: "alive", Queues: 12, InFlight: 5},
		{ID: "node-b", Incarnation: 4, Address: "10.0.0.2:7870", StartedAt: now.Add(-5 * time.Hour),
			HeartbeatAt: now.Add(-2 * time.Minute), Alive: false, State: "dead", Queues: 0, InFlight: 1},
	}
	return b
}

func TestRunListTable(t *testing.T) {
	t.Parallel()
	b := setup(t, output.Table, false)
	require.NoError(t, RunList(context.Background(), b.opts))
	require.Equal(t, ""+
		"ID      INCARNATION  ADDRESS        STATE  STARTED  HEARTBEAT  QUEUES  IN FLIGHT\n"+
		"node-a  7            10.0.0.1:7870  alive  3h       1s         12      5\n"+
		"node-b  4            10.0.0.2:7870  dead   5h       2m         0       1\n", b.out.String())
	require.Empty(t, b.hints)
}

func TestRunListWide(t *testing.T) {
	t.Parallel()
	b := setup(t, output.Wide, false)
	require.NoError(t, RunList(context.Background(), b.opts))
	require.Contains(t, b.out.String(), "INCARNATION")
	require.Contains(t, b.out.String(), "2026-12-01T00:00:00Z")
	require.Contains(t, b.out.String(), "2026-12-01T02:59:59Z")
}

func TestRunListJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, output.JSON, false)
	require.NoError(t, RunList(context.Background(), b.opts))
	var got []map[string]any
	require.NoError(t, json.Unmarshal(b.out.Bytes(), &got))
	require.Len(t, got, 2)
	require.Equal(t, map[string]any{"id": "node-a", "incarnation": 7.0, "address": "10.0.0.1:7870",
		"started_at": "2026-12-01T00:00:00Z", "heartbeat_at": "2026-12-01T02:59:59Z", "alive": true,
		"state": "alive", "queues": 12.0, "in_flight": 5.0}, got[0])
}

func TestRunListIDs(t *testing.T) {
	t.Parallel()
	b := setup(t, output.IDs, false)
	require.NoError(t, RunList(context.Background(), b.opts))
	require.Equal(t, "node-a\nnode-b\n", b.out.String())
}

// TestRunListEmpty: no node prints an empty list on stdout and says why on
// stderr, in the embedded store's words or the cluster's.
func TestRunListEmpty(t *testing.T) {
	t.Parallel()
	b := setup(t, output.JSON, true)
	b.adm.nodes = []admin.Node{}
	require.NoError(t, RunList(context.Background(), b.opts))
	require.Equal(t, "[]\n", b.out.String())
	require.Equal(t, []string{"embedded store: no node is serving it (queuectl serve runs one)"}, b.hints)

	b = setup(t, output.Table, false)
	b.adm.nodes = nil
	require.NoError(t, RunList(context.Background(), b.opts))
	require.Empty(t, b.out.String())
	require.Equal(t, []string{"no node is serving this store (queuectl serve runs one)"}, b.hints)
}
