package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestBalanceHandsBusyQueuesOver: a node that joins while another holds
// every queue with work gets its share of those queues, not of empty ones;
// the holder hands them over in two phases — it claims nothing new from a
// queue it is releasing, and frees it only once it has nothing of it DLNG —
// so the two never deliver one message.
func TestBalanceHandsBusyQueuesOver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var queues []string
	for _, app := range []string{"A", "B", "C", "D"} {
		for range 3 {
			p := storetest.NewEOIOMessage(app)
			m := storetest.NewOutboundMessage(p, storetest.ReceiverWMS)
			b.insert(t, m)
			if len(queues) == 0 || queues[len(queues)-1] != m.Queue {
				queues = append(queues, m.Queue)
			}
		}
	}
	// Empty queues: an inbound one, and its lease, with nothing open.
	idle := storetest.WithStatus(storetest.NewMessage(), domain.StatusDLVD)
	b.insert(t, idle)

	ctx := b.ctx
	ttl := 10 * time.Second
	j1, err := b.st.Join(ctx, store.JoinParams{ID: "n1", TTL: ttl, Receivers: storetest.Receivers})
	require.NoError(t, err)
	n1 := j1.Node
	// n1 claims the head of every queue.
	res, err := b.st.Claim(ctx, store.ClaimParams{Node: n1, Limit: 4, Window: 1, Receivers: storetest.Receivers})
	require.NoError(t, err)
	require.Len(t, res.Claimed, 4)

	j2, err := b.st.Join(ctx, store.JoinParams{ID: "n2", TTL: ttl, Receivers: storetest.Receivers})
	require.NoError(t, err)
	n2 := j2.Node
	owners := func() map[string]string {
		out := map[string]string{}
		require.NoError(t, b.st.View(ctx, func(r store.Reader) error {
			return r.Queues("", func(q *store.QueueRecord) error {
				out[q.Name] = q.Owner
				return nil
			})
		}))
		return out
	}
	heldBy := func(node string) (busy int) {
		for _, q := range queues {
			if owners()[q] == node {
				busy++
			}
		}
		return busy
	}
	beat := func(n store.Node) {
		_, err := b.st.Heartbeat(ctx, store.HeartbeatParams{Node: n, TTL: ttl})
		require.NoError(t, err)
	}
	// n1, over its share of busy queues (2 of 4), marks two releasing but
	// frees neither: it has their heads DLNG. n2 takes none of them.
	beat(n1)
	beat(n2)
	require.Equal(t, 4, heldBy("n1"), "owners %v", owners())
	require.Equal(t, 0, heldBy("n2"))
	releasing := map[string]bool{}
	rows, err := b.conn.Query(ctx, `SELECT queue FROM leases WHERE releasing`)
	require.NoError(t, err)
	for rows.Next() {
		var q string
		require.NoError(t, rows.Scan(&q))
		releasing[q] = true
	}
	require.NoError(t, rows.Err())
	require.Len(t, releasing, 2)

	// n1's outcomes are recorded; its next claim takes only from the
	// queues it keeps.
	var outcomes []store.Outcome
	for _, c := range res.Claimed {
		outcomes = append(outcomes, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered, Reason: "delivered"})
	}
	rec, err := b.st.Record(ctx, store.RecordParams{Node: n1, Outcomes: outcomes,
		Claim: &store.ClaimParams{Node: n1, Limit: 8, Window: 1, Receivers: storetest.Receivers}})
	require.NoError(t, err)
	for i, a := range rec.Applied {
		require.NotNil(t, a, "outcome %d: %v", i, rec.Conflicts)
	}
	require.NotEmpty(t, rec.Claim.Claimed)
	for _, c := range rec.Claim.Claimed {
		require.False(t, releasing[c.Message.Queue], "claimed %s from releasing queue %s", c.Message.ID, c.Message.Queue)
	}

	// Nothing of them DLNG: n1 frees them, n2 takes them, with new epochs.
	beat(n1)
	beat(n2)
	o := owners()
	for q := range releasing {
		require.Equal(t, "n2", o[q], "owners %v", o)
	}
	require.Equal(t, 2, heldBy("n1"))
	require.Equal(t, 2, heldBy("n2"))
	require.Equal(t, "n2", o[idle.Queue], "the queue without work: n1 is over its share of all queues (3 of 5)")
}
