package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// eoioLock is the advisory lock an EOIO switch holds (eoioLockClass, and
// the schema's name). A claim waits for it after it read its leases.
const eoioLock = `SELECT pg_advisory_xact_lock(x'656f696f'::int, hashtext(current_schema()))`

// TestClaimLeavesAQueueThatGotWorkDuringIt: each statement of a claim reads
// what was committed when it began. A queue the node holds that gets work
// after the claim read its leases — so the claim locked no lease of it,
// and knows no epoch to claim under — but before the claim read the heads
// is left to the next claim. No message is claimed without its lease.
func TestClaimLeavesAQueueThatGotWorkDuringIt(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.URL(t)
	st, err := postgres.Open(ctx, url, postgres.Options{Migrate: true, MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, st.Check(context.Background()))
		require.NoError(t, st.Close())
	})
	j, err := st.Join(ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
	require.NoError(t, err)
	node := j.Node
	insert := func(m *domain.Message) {
		t.Helper()
		require.NoError(t, st.Update(ctx, func(w store.Writer) error {
			return w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received"))
		}))
	}
	params := store.ClaimParams{Node: node, Limit: 10, Window: 32, Candidates: store.CandidatesSkip, Receivers: storetest.Receivers}
	deliver := func(claimed []store.Claimed) {
		t.Helper()
		var outcomes []store.Outcome
		for _, c := range claimed {
			outcomes = append(outcomes, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered})
		}
		rec, err := st.Record(ctx, store.RecordParams{Node: node, Outcomes: outcomes})
		require.NoError(t, err)
		require.Empty(t, rec.Conflicts, "every claimed message is delivered under its lease")
	}

	// The node holds the queue, with nothing left in it.
	parent := storetest.NewMessage()
	first, second := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS), storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
	insert(first)
	res, err := st.Claim(ctx, params)
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1)
	deliver(res.Claimed)

	// The next claim reads its leases, then waits for the lock...
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, eoioLock)
	require.NoError(t, err)
	claimed := make(chan *store.ClaimResult, 1)
	go func() {
		res, err := st.Claim(context.WithoutCancel(ctx), params)
		if err != nil {
			t.Errorf("claim: %v", err)
		}
		claimed <- res
	}()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var waiting bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`,
			conn.PgConn().PID()).Scan(&waiting))
		if waiting {
			break
		}
		require.True(t, time.Now().Before(deadline), "the claim never waited for the lock")
	}
	// ... while the queue gets work.
	insert(second)
	require.NoError(t, tx.Commit(ctx))
	res = <-claimed
	require.NotNil(t, res)
	if len(res.Claimed) == 0 {
		require.True(t, res.More, "the claim that left the queue says there is more")
		res, err = st.Claim(ctx, params)
		require.NoError(t, err)
	}
	require.Equal(t, []string{second.ID}, []string{res.Claimed[0].Message.ID})
	deliver(res.Claimed)
}

// TestClaimNeverPassesALockedEOIOHead: a node claims in two transactions
// at once (the loop's claims and those that ride with outcomes), and a
// claim locks the heads it reads even where it takes none. While another
// transaction holds an EOIO queue's head, a claim takes nothing from that
// queue: it must not pass the head and start the message behind it.
func TestClaimNeverPassesALockedEOIOHead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.URL(t)
	st, err := postgres.Open(ctx, url, postgres.Options{Migrate: true, MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, st.Check(context.Background()))
		require.NoError(t, st.Close())
	})
	j, err := st.Join(ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
	require.NoError(t, err)
	parent := storetest.NewEOIOMessage("ORDERS")
	head, next := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS), storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		for _, m := range []*domain.Message{head, next} {
			if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
				return err
			}
		}
		return nil
	}))

	other, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM messages WHERE id = $1 FOR UPDATE`, head.ID)
	require.NoError(t, err)
	params := store.ClaimParams{Node: j.Node, Limit: 10, Window: 32, Candidates: store.CandidatesSkip, Receivers: storetest.Receivers}
	res, err := st.Claim(ctx, params)
	require.NoError(t, err)
	require.Empty(t, res.Claimed, "the head is another transaction's: its successor waits")
	require.NoError(t, tx.Rollback(ctx))

	res, err = st.Claim(ctx, params)
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1)
	require.Equal(t, head.ID, res.Claimed[0].Message.ID)
}
