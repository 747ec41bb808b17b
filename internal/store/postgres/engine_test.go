package postgres_test

import (
	"context"
	"sync"
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

// TestEngine runs the suite of the engine's seam on PostgreSQL.
func TestEngine(t *testing.T) {
	t.Parallel()
	storetest.RunEngine(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}

// TestCluster runs the cluster suite with two stores — two pools, as two
// nodes have — on one schema.
func TestCluster(t *testing.T) {
	t.Parallel()
	storetest.RunCluster(t, func(t *testing.T) (store.Store, store.Store) {
		url := pgtest.URL(t)
		var stores [2]store.Store
		for i := range stores {
			st, err := postgres.Open(context.Background(), url, postgres.Options{Migrate: i == 0, MaxConns: 4})
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoError(t, st.Check(context.Background()), "the store's invariants hold")
				require.NoError(t, st.Close())
			})
			stores[i] = st
		}
		return stores[0], stores[1]
	})
}

// TestBatchesCostFixedRoundTrips checks §14's batching on PostgreSQL: a
// claim of many messages over several queues, and a batch of as many
// outcomes, take as many round trips as those of a few.
func TestBatchesCostFixedRoundTrips(t *testing.T) {
	t.Parallel()
	cost := func(t *testing.T, n int) (claim, record, recordClaim uint64) {
		st := pgtest.Open(t)
		ctx := t.Context()
		j, err := st.Join(ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Receivers: storetest.Receivers})
		require.NoError(t, err)
		msgs := make([]*domain.Message, 0, 2*n)
		for i := range 2 * n {
			m := storetest.NewOutboundMessage(storetest.NewMessage(), storetest.ReceiverWMS)
			msgs = append(msgs, storetest.InQueue(m, domain.EOOutboundQueue(domain.Code4(storetest.ReceiverWMS), 4, i%4)))
		}
		require.NoError(t, st.Update(ctx, func(w store.Writer) error {
			for _, m := range msgs {
				if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
					return err
				}
			}
			return nil
		}))
		p := store.ClaimParams{Node: j.Node, Limit: n, Window: 32, Candidates: store.CandidatesSkip, Receivers: storetest.Receivers}
		before, commits := st.RoundTrips(), st.Commits()
		res, err := st.Claim(ctx, p)
		require.NoError(t, err)
		require.Len(t, res.Claimed, n)
		require.Equal(t, commits+1, st.Commits(), "a claim is one commit")
		claim = st.RoundTrips() - before
		outcomes := func(claimed []store.Claimed) []store.Outcome {
			var out []store.Outcome
			for _, c := range claimed {
				out = append(out, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered})
			}
			return out
		}
		half := res.Claimed[:n/2]
		before = st.RoundTrips()
		rec, err := st.Record(ctx, store.RecordParams{Node: j.Node, Outcomes: outcomes(half)})
		require.NoError(t, err)
		require.Empty(t, rec.Conflicts)
		record = st.RoundTrips() - before
		before = st.RoundTrips()
		rec, err = st.Record(ctx, store.RecordParams{Node: j.Node, Outcomes: outcomes(res.Claimed[n/2:]), Claim: &p})
		require.NoError(t, err)
		require.Len(t, rec.Claim.Claimed, n, "the outcomes' claim takes the rest")
		recordClaim = st.RoundTrips() - before
		return claim, record, recordClaim
	}
	c4, r4, rc4 := cost(t, 4)
	c40, r40, rc40 := cost(t, 40)
	t.Logf("round trips: claim %d, record %d, record and claim %d", c40, r40, rc40)
	require.Equal(t, c4, c40, "a claim's round trips do not grow with the messages it claims")
	require.Equal(t, r4, r40, "nor an outcome batch's with its outcomes")
	require.Equal(t, rc4, rc40)
}

// TestRecordDamaged: an outcome batch with one row the store cannot decode
// (headers that are not text) records the others.
func TestRecordDamaged(t *testing.T) {
	t.Parallel()
	var urls sync.Map // *postgres.Store → its schema's URL
	storetest.RunRecordDamaged(t, func(t *testing.T) store.Store {
		url := pgtest.URL(t)
		st, err := postgres.Open(context.Background(), url, postgres.Options{Migrate: true, MaxConns: 4})
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, st.Check(context.Background()), "the store's invariants hold")
			require.NoError(t, st.Close())
		})
		urls.Store(st, url)
		return st
	}, func(t *testing.T, st store.Store, id string) func() {
		url, _ := urls.Load(st)
		conn, err := pgx.Connect(t.Context(), url.(string))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, conn.Close(context.Background())) })
		exec := func(sql string) {
			_, err := conn.Exec(context.Background(), sql, id)
			require.NoError(t, err)
		}
		exec(`UPDATE messages SET headers = '{"Content-Type": 1}' WHERE id = $1`)
		return func() { exec(`UPDATE messages SET headers = NULL WHERE id = $1`) }
	})
}
