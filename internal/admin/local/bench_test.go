package local_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// BenchmarkReleaseAll10k times `blacklist release --all --yes` over 10,000
// blacklisted messages on a store that syncs every commit: the ids are
// enumerated from the status index a chunk of 1000 at a time, and each
// chunk is released in one Act, one commit with its audit entry.
func BenchmarkReleaseAll10k(b *testing.B) {
	const n, chunk = 10_000, 1000
	ctx := context.Background()
	var commits uint64
	for range b.N {
		b.StopTimer()
		st, err := bolt.Open(filepath.Join(b.TempDir(), "q.db"), bolt.Options{})
		require.NoError(b, err)
		seedBlacklisted(b, st, n, chunk)
		svc := local.New(st, local.Options{Actor: "bench"})
		before := st.Commits()
		b.StartTimer()

		released := releaseAll(b, ctx, svc, chunk)

		b.StopTimer()
		require.Equal(b, n, released)
		commits += st.Commits() - before
		require.NoError(b, svc.Close())
		b.StartTimer()
	}
	b.ReportMetric(float64(commits)/float64(b.N), "commits/op")
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// releaseAll does what `blacklist release --all --yes` does: it walks the
// blacklisted NDLV messages from the status index a chunk at a time and
// releases each chunk. It returns how many were released.
func releaseAll(b *testing.B, ctx context.Context, svc *local.Service, chunk int) int {
	yes := true
	released, after := 0, ""
	for {
		ids := make([]string, 0, chunk)
		err := svc.Messages(ctx, admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes,
			After: after, Limit: chunk}, func(m *domain.Message) error {
			ids = append(ids, m.ID)
			return nil
		})
		require.NoError(b, err)
		if len(ids) == 0 {
			return released
		}
		res, err := svc.Act(ctx, admin.ActParams{Action: admin.ActRelease, Targets: ids})
		require.NoError(b, err)
		released += res.Changed
		after = ids[len(ids)-1]
	}
}

// seedBlacklisted stores n EO outbound messages over 100 queues and takes
// each through DLNG to NDLV blacklisted, as crash recovery leaves them,
// batch messages per commit.
func seedBlacklisted(tb testing.TB, st store.Store, n, batch int) {
	tb.Helper()
	now := time.Now().UTC()
	for start := 0; start < n; start += batch {
		require.NoError(tb, st.Update(context.Background(), func(w store.Writer) error {
			h := domain.HistoryEntry{At: now, Node: "node-a", Actor: "engine"}
			for i := start; i < min(start+batch, n); i++ {
				m := &domain.Message{
					ID: domain.NewID(), QoS: domain.EO, Sender: "ERP", Receiver: "WMS", Stage: domain.Outbound,
					Queue: domain.EOOutboundQueue(domain.Code4("WMS"), 100, i%100), Status: domain.StatusTBDL,
				}
				if err := w.Insert(m, []byte(fmt.Sprintf(`{"order":%d}`, i)), h); err != nil {
					return err
				}
				if _, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL},
					To: domain.StatusDLNG, History: h, Update: func(m *domain.Message) { m.Attempts, m.Node = 1, "node-a" }}); err != nil {
					return err
				}
				if _, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusDLNG},
					To: domain.StatusNDLV, History: h, Update: func(m *domain.Message) {
						m.Crashes, m.Blacklisted, m.Node = 2, true, "node-a"
						m.Error, m.ErrorClass = "blacklisted: the engine process died 2 times while delivering it", domain.ErrorCrash
					}}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}
