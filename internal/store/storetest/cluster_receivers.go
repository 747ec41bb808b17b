package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testClusterReceivers: a node holds only the outbound queues of the
// receivers it has configured (§8, §11), so a queue whose receiver only
// some nodes have is delivered by one of them, and one whose receiver no
// live node has waits, held by nobody, for a node that has it.
func testClusterReceivers(t *testing.T, open ClusterOpener) {
	// joinWith starts node id with receivers.
	joinWith := func(t *testing.T, c *clusterBundle, eng store.EngineStore, id string, receivers ...string) store.Node {
		t.Helper()
		j, err := eng.Join(c.ctx, store.JoinParams{ID: id, TTL: liveTTL, Heartbeat: testHeartbeat, Receivers: receivers})
		require.NoError(t, err)
		return j.Node
	}
	claimWith := func(t *testing.T, c *clusterBundle, eng store.EngineStore, n store.Node, receivers ...string) []string {
		t.Helper()
		res, err := eng.Claim(c.ctx, store.ClaimParams{Node: n, Limit: 100, Window: 32, Receivers: receivers})
		require.NoError(t, err)
		return claimedIDs(res)
	}
	// spreadTo inserts one outbound EO message for receiver in each of n queues.
	spreadTo := func(t *testing.T, c *clusterBundle, receiver string, n int) []*domain.Message {
		t.Helper()
		var msgs []*domain.Message
		for i := range n {
			m := NewOutboundMessage(NewMessage(), receiver)
			msgs = append(msgs, InQueue(m, domain.EOOutboundQueue(domain.Code4(receiver), 100, i)))
		}
		c.insert(t, msgs...)
		return msgs
	}

	t.Run("EachQueueGoesToANodeThatHasItsReceiver", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na := joinWith(t, c, c.a, "A", ReceiverWMS)
		nb := joinWith(t, c, c.b, "B", ReceiverARCHIVE)
		wms, archive := spreadTo(t, c, ReceiverWMS, 4), spreadTo(t, c, ReceiverARCHIVE, 2)
		for range 2 {
			c.heartbeat(t, c.a, na)
			c.heartbeat(t, c.b, nb)
		}
		require.Equal(t, 4, c.heartbeat(t, c.a, na).Queues, "A may hold only the WMS queues: all of them")
		require.Equal(t, 2, c.heartbeat(t, c.b, nb).Queues, "B the ARCHIVE queues")
		require.ElementsMatch(t, idsOf(wms...), claimWith(t, c, c.a, na, ReceiverWMS))
		require.ElementsMatch(t, idsOf(archive...), claimWith(t, c, c.b, nb, ReceiverARCHIVE))
		requireConsistent(t, c.testBundle)
	})

	t.Run("AQueueNoLiveNodeMayHoldWaitsForOneThatMay", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na := joinWith(t, c, c.a, "A", ReceiverARCHIVE)
		wms := spreadTo(t, c, ReceiverWMS, 1)
		c.heartbeat(t, c.a, na)
		require.Empty(t, claimWith(t, c, c.a, na, ReceiverARCHIVE))
		require.Empty(t, c.queue(t, wms[0].Queue).Owner, "nobody holds it")
		require.Equal(t, domain.StatusTBDL, c.message(t, wms[0].ID).Status)

		lister, ok := c.a.(store.NodeLister)
		require.True(t, ok)
		nodes, err := lister.Nodes(c.ctx, store.NodesParams{TTL: liveTTL})
		require.NoError(t, err)
		require.Len(t, nodes, 1)
		require.Equal(t, []string{ReceiverARCHIVE}, nodes[0].Receivers, "a node publishes its receivers")

		nb := joinWith(t, c, c.b, "B", ReceiverWMS)
		require.Equal(t, idsOf(wms...), claimWith(t, c, c.b, nb, ReceiverWMS),
			"the node that has the receiver takes the queue at its first claim")
		require.Equal(t, "B", c.queue(t, wms[0].Queue).Owner)
	})
}
