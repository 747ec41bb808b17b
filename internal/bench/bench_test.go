package bench_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/bench"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

func openStore(t testing.TB) *bolt.Store {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "bench.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	return st
}

func defaults(t testing.TB) *config.Config {
	t.Helper()
	c, err := config.LoadFile("")
	require.NoError(t, err)
	return c
}

func TestRunDeliversEveryMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		qos      domain.QoS
		queues   int
		receiver string
	}{
		{domain.EO, 1, "discard"},
		{domain.EO, 3, "http"},
		{domain.EOIO, 2, "discard"},
	} {
		t.Run(string(tt.qos)+"/"+tt.receiver, func(t *testing.T) {
			t.Parallel()
			st := openStore(t)
			res, err := bench.Run(t.Context(), bench.Options{
				Store: st, Config: defaults(t), Messages: 500, QoS: tt.qos, Queues: tt.queues, Payload: 200,
				ReceiverType: tt.receiver,
			})
			require.NoError(t, err)
			require.Equal(t, 500, res.Messages)
			require.Positive(t, res.Throughput)
			require.Positive(t, res.SendRate)
			require.LessOrEqual(t, res.LatencyP50, res.LatencyP99)
			require.Positive(t, res.CommitsPerMessage)
			require.Positive(t, res.StoreBytes)
			require.Positive(t, res.CPUPerMessage, "the CPU time of the run is measured")
			counts := map[domain.Status]int64{}
			queues := 0
			require.NoError(t, st.View(t.Context(), func(r store.Reader) error {
				return r.Queues("", func(q *store.QueueRecord) error {
					queues++
					for s, n := range q.Counts {
						counts[s] += n
					}
					return nil
				})
			}))
			require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1000}, counts, "every inbound and outbound message delivered")
			require.Equal(t, 2*tt.queues, queues, "the messages were spread over --queues queues per stage")
		})
	}
}

func TestRunRefusesBadOptions(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	_, err := bench.Run(t.Context(), bench.Options{Store: st, Config: defaults(t), Messages: 0, QoS: domain.EO, Queues: 1})
	require.ErrorIs(t, err, domain.ErrInvalid)
	_, err = bench.Run(t.Context(), bench.Options{Store: st, Config: defaults(t), Messages: 1, QoS: domain.EO, Queues: 1,
		ReceiverType: "ftp"})
	require.ErrorContains(t, err, `--receiver "ftp" must be discard or http`)
}

func TestFill(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	res, err := bench.Fill(t.Context(), st, bench.FillOptions{Messages: 25000, Queues: 10, Blacklisted: 7, Payload: 50})
	require.NoError(t, err)
	require.Equal(t, 25000, res.Messages)
	require.Equal(t, 7, res.Blacklisted)
	require.Equal(t, 10, res.Open, "the last message of each queue is TBDL")

	var blacklisted []*domain.Message
	queues := 0
	require.NoError(t, st.View(t.Context(), func(r store.Reader) error {
		yes := true
		if err := r.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes},
			func(m *domain.Message) error {
				blacklisted = append(blacklisted, m)
				return nil
			}); err != nil {
			return err
		}
		return r.Queues("", func(q *store.QueueRecord) error {
			queues++
			require.Equal(t, int64(2500), q.Counts[domain.StatusDLVD]+q.Counts[domain.StatusTBDL]+q.Counts[domain.StatusNDLV])
			return nil
		})
	}))
	require.Len(t, blacklisted, 7)
	for _, m := range blacklisted {
		require.Equal(t, domain.EO, m.QoS, "blacklisted EO messages leave their queue: no HOLD to keep consistent")
		require.Equal(t, 2, m.Crashes)
	}
	require.Equal(t, 10, queues)

	_, err = bench.Fill(t.Context(), st, bench.FillOptions{Messages: 10, Queues: 1})
	require.ErrorIs(t, err, domain.ErrInvalid, "a store with messages is left alone")
	require.ErrorContains(t, err, "holds messages already")
	_, err = bench.Fill(t.Context(), st, bench.FillOptions{Messages: 10, Queues: 2, Blacklisted: 6})
	require.ErrorContains(t, err, "--blacklisted 6 must be between 0 and the 5 messages of EO queues")
}

// BenchmarkEngine runs `queuectl bench` from a Go benchmark: b.N messages
// through the real engine on a fresh store, with fsync.
//
//	go test -run XXX -bench Engine -benchtime 20000x ./internal/bench/
func BenchmarkEngine(b *testing.B) {
	for _, tt := range []struct {
		name string
		qos  domain.QoS
	}{{"EO", domain.EO}, {"EOIO", domain.EOIO}} {
		b.Run(tt.name, func(b *testing.B) {
			st, err := bolt.Open(filepath.Join(b.TempDir(), "bench.db"), bolt.Options{})
			require.NoError(b, err)
			defer st.Close()
			b.ResetTimer()
			res, err := bench.Run(b.Context(), bench.Options{Store: st, Config: defaults(b), Messages: b.N, QoS: tt.qos,
				Queues: 1, Payload: 200, ReceiverType: "discard"})
			require.NoError(b, err)
			b.ReportMetric(res.Throughput, "msgs/s")
			b.ReportMetric(res.CommitsPerMessage, "commits/msg")
			b.ReportMetric(res.CPUPerMessage, "cpu-µs/msg")
			b.ReportMetric(res.StoreBytes, "store-B/msg")
		})
	}
}
