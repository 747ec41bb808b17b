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

// TestBalanceTakesAStrandedQueueBeyondItsShare: a free queue with work
// whose receiver only nodes at their share have is not left to a hungry
// node that cannot hold it: one of those that may takes it beyond its
// share, and hands over a queue the hungry node may take instead.
func TestBalanceTakesAStrandedQueueBeyondItsShare(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, ttl := b.ctx, 10*time.Second
	join := func(id string, receivers ...string) store.Node {
		j, err := b.st.Join(ctx, store.JoinParams{ID: id, TTL: ttl, Receivers: receivers})
		require.NoError(t, err)
		return j.Node
	}
	both := []string{storetest.ReceiverARCHIVE, storetest.ReceiverWMS}
	na, nc := join("A", both...), join("C", both...)
	nb := join("B", storetest.ReceiverARCHIVE)
	queue := func(receiver string, i int) string {
		m := storetest.InQueue(storetest.NewOutboundMessage(storetest.NewMessage(), receiver),
			domain.EOOutboundQueue(domain.Code4(receiver), 100, i))
		b.insert(t, m)
		return m.Queue
	}
	x1, x2 := queue(storetest.ReceiverWMS, 1), queue(storetest.ReceiverWMS, 2)
	var y []string
	for i := range 6 {
		y = append(y, queue(storetest.ReceiverARCHIVE, i))
	}
	// Shares: A and C 2/2 + 6/3 = 3 each, B 6/3 = 2. A and C are at theirs;
	// B is below it, but may not hold x2.
	give := func(n store.Node, queues ...string) {
		_, err := b.conn.Exec(ctx, `UPDATE leases SET node = $1, incarnation = $2, epoch = epoch + 1,
			expires_at = 'infinity', releasing = false WHERE queue = ANY($3)`, n.ID, int64(n.Incarnation), queues)
		require.NoError(t, err)
	}
	give(na, x1, y[0], y[1])
	give(nc, y[2], y[3], y[4])
	give(nb, y[5])
	_, err := b.conn.Exec(ctx, `UPDATE leases SET expires_at = '-infinity' WHERE queue = $1`, x2)
	require.NoError(t, err)

	beat := func(n store.Node) int {
		res, err := b.st.Heartbeat(ctx, store.HeartbeatParams{Node: n, TTL: ttl})
		require.NoError(t, err)
		return res.Queues
	}
	require.Equal(t, 3, beat(na), "A takes x2 beyond its share, and hands a queue B may take over")
	require.Equal(t, 2, beat(nb), "B takes it")
	require.Equal(t, 3, beat(nc))
	require.Equal(t, 3, beat(na), "and nothing moves any more")

	owners := map[string]string{}
	require.NoError(t, b.st.View(ctx, func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			owners[q.Name] = q.Owner
			return nil
		})
	}))
	require.Equal(t, "A", owners[x1])
	require.Equal(t, "A", owners[x2], "the WMS queues go to a node that has WMS")
	for _, q := range y {
		require.NotEmpty(t, owners[q], "every queue has a holder: %v", owners)
	}
}
