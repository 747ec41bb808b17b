package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// refusingRecords is a store whose Record fails, as a database refusing
// one row's write would, for every batch that holds an outcome of the
// message whose payload is bad (none when bad is empty); it counts the
// Records.
type refusingRecords struct {
	engine.Store
	bad     string
	records atomic.Int64
}

func (s *refusingRecords) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	s.records.Add(1)
	for _, o := range p.Outcomes {
		if s.bad == "" {
			break
		}
		var payload []byte
		if err := s.View(ctx, func(r store.Reader) error {
			var err error
			payload, err = r.Payload(o.ID)
			return err
		}); err == nil && string(payload) == s.bad {
			return nil, fmt.Errorf("message %s: the database refused the row", o.ID)
		}
	}
	return s.Store.Record(ctx, p)
}

// TestBadOutcomeIsParked: a batch of outcomes that fails for one message is
// recorded apart until the message is found; every other outcome is
// recorded, the bad one goes NDLV saying why, and the engine goes on. On
// bbolt the refusal is the store's caller's (nothing in the file can refuse
// one write); on PostgreSQL it is the database's own, a trigger that raises
// for the row.
func TestBadOutcomeIsParked(t *testing.T) {
	t.Parallel()
	t.Run("bolt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		st := &refusingRecords{bad: "2"}
		b.wrap = func(s engine.Store) engine.Store { st.Store = s; return st }
		badOutcomeIsParked(t, b, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := pgtest.URL(t)
		b := setupOn(t, func(t *testing.T, _ func() time.Time) engine.Store {
			st, err := postgres.Open(t.Context(), url, postgres.Options{Migrate: true})
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoError(t, st.Check(context.Background()), "the store's invariants hold")
				require.NoError(t, st.Close())
			})
			return st
		})
		conn, err := pgx.Connect(t.Context(), url)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, conn.Close(context.Background())) })
		_, err = conn.Exec(t.Context(), `
			CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.status = 'DLVD' AND NEW.stage = 'outbound'
					AND (SELECT data FROM payloads WHERE id = NEW.payload_id) = '2'::bytea THEN
					RAISE EXCEPTION 'message %: the database refused the row', NEW.id;
				END IF;
				RETURN NEW;
			END $$;
			CREATE TRIGGER refuse_bad BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION refuse_bad();`)
		require.NoError(t, err)
		st := &refusingRecords{}
		b.wrap = func(s engine.Store) engine.Store { st.Store = s; return st }
		badOutcomeIsParked(t, b, st)
	})
}

func badOutcomeIsParked(t *testing.T, b *testBundle, st *refusingRecords) {
	ep := b.newEndpoint(t, "WMS")
	// The four deliveries are answered together, so that their outcomes
	// share a batch.
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	ep.respond(func(r *http.Request, _ arrival, _ int) int {
		mu.Lock()
		if arrived++; arrived == 4 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-r.Context().Done():
		}
		return http.StatusOK
	})
	in := b.send(t, eo("WMS", "1"), eo("WMS", "2"), eo("WMS", "3"), eo("WMS", "4"))
	b.start(t)
	b.waitSettled(t, "the outcomes recorded", func() bool { return b.count(engine.EventDelivered) == 3 && b.count(engine.EventFailed) == 1 })

	for i, m := range in {
		out := b.outboundOf(t, m.ID)
		if i == 1 {
			require.Equal(t, domain.StatusNDLV, out.Status, "the bad one is parked")
			require.Equal(t, domain.ErrorPermanent, out.ErrorClass)
			require.Contains(t, out.Error, "its outcome (delivered) could not be recorded")
			require.Contains(t, out.Error, "the database refused the row")
			require.Empty(t, out.Node)
			last := b.message(t, out.ID).History
			require.Equal(t, "DLNG>NDLV", transitions(last)[len(last)-1])
			continue
		}
		require.Equal(t, domain.StatusDLVD, out.Status, "every other outcome is recorded")
	}
	require.True(t, b.logged("an outcome that cannot be recorded is parked: the message is NDLV"), b.logSummary())
	require.Len(t, ep.all(), 4, "no delivery again")
	require.False(t, slices.ContainsFunc(ep.all(), func(a arrival) bool { return a.Code != http.StatusOK }))

	// The engine goes on: a later message is delivered at once.
	before := st.records.Load()
	b.send(t, eo("WMS", "5"))
	b.waitSettled(t, "the next delivery", func() bool { return b.count(engine.EventDelivered) == 4 })
	require.Less(t, st.records.Load()-before, int64(4), "no batch is retried")
}
