package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/bench"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// TestEngineDeliversOnPostgreSQL runs the real engine — join, claims,
// routing, deliveries, outcomes, wakeups — on PostgreSQL, through the
// pipeline `queuectl bench` drives, and checks that every message arrives.
func TestEngineDeliversOnPostgreSQL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		qos    domain.QoS
		queues int
	}{{domain.EO, 3}, {domain.EOIO, 2}} {
		t.Run(string(tt.qos), func(t *testing.T) {
			t.Parallel()
			st := pgtest.Open(t)
			c, err := config.LoadFile("")
			require.NoError(t, err)
			const n = 300
			commits, trips := st.Commits(), st.RoundTrips()
			res, err := bench.Run(t.Context(), bench.Options{Store: st, Config: c, Messages: n, QoS: tt.qos, Queues: tt.queues,
				Payload: 200, ReceiverType: "discard"})
			require.NoError(t, err)
			require.Equal(t, n, res.Messages)
			t.Logf("%s, %d queues: %.0f msgs/s, %.3f commits and %.2f round trips per message", tt.qos, tt.queues, res.Throughput,
				float64(st.Commits()-commits)/n, float64(st.RoundTrips()-trips)/n)
			counts := map[domain.Status]int64{}
			require.NoError(t, st.View(t.Context(), func(r store.Reader) error {
				return r.Queues("", func(q *store.QueueRecord) error {
					for s, k := range q.Counts {
						counts[s] += k
					}
					return nil
				})
			}))
			require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 2 * n}, counts, "every inbound and outbound message delivered")
		})
	}
}
