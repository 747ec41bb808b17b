package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
