package local_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// TestQueueStateUnconfigured: a queue with messages to deliver whose
// receiver no engine has configured is UNCONFIGURED — by the receivers of
// the live nodes when one runs, else by the configuration's receivers
// when it names any; with neither, the service cannot tell and marks
// nothing. A queue that needs an operator keeps its state.
func TestQueueStateUnconfigured(t *testing.T) {
	t.Parallel()
	b := setup(t) // configured: WMS, ARCHIVE
	parent := b.sendOne(t, eo("1"))
	crm := b.outbound(t, parent, "CRM")
	wms := b.outbound(t, parent, "WMS")
	ordered := b.sendOne(t, eoio("X", "1"))
	blocked := b.outbound(t, ordered, "CRM")
	b.ndlv(t, blocked.ID, domain.ErrorTransient, "connection refused")

	states := func(svcQueues func(admin.QueueFilter) []*domain.Queue) map[string]domain.QueueState {
		out := map[string]domain.QueueState{}
		for _, q := range svcQueues(admin.QueueFilter{}) {
			out[q.Name] = q.State
		}
		return out
	}
	mine := func(f admin.QueueFilter) []*domain.Queue { return b.queues(t, f) }
	require.Equal(t, map[string]domain.QueueState{
		parent.Queue:  domain.QueueActive, // inbound: routing needs no receiver
		ordered.Queue: domain.QueueActive,
		crm.Queue:     domain.QueueUnconfigured, // CRM is not among the configured receivers
		wms.Queue:     domain.QueueActive,
		blocked.Queue: domain.QueueBlocked, // what needs an operator first says so
	}, states(mine))
	require.Equal(t, []string{crm.Queue}, names(b.queues(t, admin.QueueFilter{States: []domain.QueueState{domain.QueueUnconfigured}})))
	q, err := b.svc.Queue(b.ctx, crm.Queue)
	require.NoError(t, err)
	require.Equal(t, domain.QueueUnconfigured, q.State, "queue show agrees")

	// A configuration without receivers is no engine's: nothing is marked.
	bare := newServiceOn(b)
	bareQueues := func(f admin.QueueFilter) []*domain.Queue {
		var out []*domain.Queue
		require.NoError(t, bare.Queues(b.ctx, f, func(q *domain.Queue) error {
			out = append(out, q)
			return nil
		}))
		return out
	}
	require.Equal(t, domain.QueueActive, states(bareQueues)[crm.Queue])

	// While an engine runs, its receivers decide, whatever the
	// configuration of the command says.
	eng := b.st.(store.EngineStore)
	joined, err := eng.Join(b.ctx, store.JoinParams{ID: "n1", TTL: time.Hour, Receivers: []string{"CRM"}})
	require.NoError(t, err)
	require.Equal(t, domain.QueueActive, states(mine)[crm.Queue])
	require.Equal(t, domain.QueueUnconfigured, states(mine)[wms.Queue])
	require.Equal(t, domain.QueueUnconfigured, states(bareQueues)[wms.Queue])
	require.NoError(t, eng.Leave(b.ctx, joined.Node))
	require.Equal(t, domain.QueueUnconfigured, states(mine)[crm.Queue], "no engine: the configuration again")
}

// TestUnconfiguredBacklog: what serve warns of and config check lists —
// per receiver the configuration lacks, the messages of its outbound
// queues that wait for delivery (not those NDLV, which wait for an
// operator), and in how many queues.
func TestUnconfiguredBacklog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	parent := b.sendOne(t, eo("1"))
	b.outbound(t, parent, "CRM")
	b.outbound(t, parent, "CRM")
	b.outbound(t, parent, "WMS")
	ordered := b.sendOne(t, eoio("X", "1"))
	head := b.outbound(t, ordered, "CRM")
	b.outbound(t, ordered, "CRM")
	b.ndlv(t, head.ID, domain.ErrorTransient, "connection refused")
	b.outbound(t, parent, "AUDIT")
	b.deliver(t, b.outbound(t, ordered, "AUDIT").ID)

	got, err := admin.Unconfigured(b.ctx, b.svc, []string{"WMS"})
	require.NoError(t, err)
	require.Equal(t, []admin.ReceiverBacklog{
		{Receiver: "AUDIT", Messages: 1, Queues: 1}, // its delivered message waits for nothing
		{Receiver: "CRM", Messages: 3, Queues: 2},
	}, got)
	got, err = admin.Unconfigured(b.ctx, b.svc, []string{"AUDIT", "CRM", "WMS"})
	require.NoError(t, err)
	require.Empty(t, got)
}
