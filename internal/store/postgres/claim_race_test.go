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
// the schema's name) until it commits.
const eoioLock = `SELECT pg_advisory_xact_lock(x'656f696f'::int, hashtext(current_schema()))`

// TestClaimWaitsForNoSwitch: the claim statement reads the switch state in
// its own snapshot — a switch under way is not committed, so the claim
// sees the state before it, under which no queue of the new set has a
// message yet — and takes no advisory lock: an EOIO switch (or anything
// else that holds its lock) never stops the delivery of EO messages.
func TestClaimWaitsForNoSwitch(t *testing.T) {
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
	params := store.ClaimParams{Node: j.Node, Limit: 10, Window: 32, Candidates: store.CandidatesSkip, Receivers: storetest.Receivers}
	parent := storetest.NewMessage()
	eo := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		return w.Insert(eo, storetest.PayloadOf(eo), storetest.Entry("received"))
	}))
	// A first claim takes the node's leases.
	res, err := st.Claim(ctx, store.ClaimParams{Node: j.Node, Receivers: storetest.Receivers})
	require.NoError(t, err)
	require.Empty(t, res.Claimed)

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, eoioLock)
	require.NoError(t, err)
	type result struct {
		res *store.ClaimResult
		err error
	}
	claimed := make(chan result, 1)
	go func() {
		res, err := st.Claim(context.WithoutCancel(ctx), params)
		claimed <- result{res, err}
	}()
	var got result
	for got.res == nil && got.err == nil {
		select {
		case got = <-claimed:
			continue
		default:
		}
		var waiting bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`,
			conn.PgConn().PID()).Scan(&waiting))
		if waiting {
			t.Error("the claim waits for the switch's lock")
			require.NoError(t, tx.Rollback(ctx))
			got = <-claimed
		}
	}
	require.NoError(t, got.err)
	require.Equal(t, []string{eo.ID}, []string{got.res.Claimed[0].Message.ID})
	require.NoError(t, tx.Rollback(ctx))
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
