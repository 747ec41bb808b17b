package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store"
)

// refusingRecords is a store whose Record fails, as a database refusing
// one row's write would, for every batch that holds an outcome of the
// message whose payload is bad.
type refusingRecords struct {
	engine.Store
	bad     string
	records atomic.Int64
}

func (s *refusingRecords) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	s.records.Add(1)
	for _, o := range p.Outcomes {
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
// recorded, the bad one goes NDLV saying why, and the engine goes on.
func TestBadOutcomeIsParked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	st := &refusingRecords{bad: "2"}
	b.wrap = func(s engine.Store) engine.Store { st.Store = s; return st }
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
