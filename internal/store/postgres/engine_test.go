package postgres_test

import (
	"testing"

	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestEngine runs the suite of the engine's seam on PostgreSQL.
func TestEngine(t *testing.T) {
	t.Parallel()
	storetest.RunEngine(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}
