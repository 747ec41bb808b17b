package engine_test

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// BenchmarkEngineEO sends 10,000 EO messages through the whole pipeline
// (send, inbound routing, outbound delivery to a discard receiver) on a
// store that syncs every commit, and reports end-to-end throughput from
// the first send to the last DLVD and store commits per message. The
// sub-benchmarks set EO_INBOUND_PARALLEL and EO_OUTBOUND_PARALLEL (§7):
// parallel=1 is the default of a fresh store.
func BenchmarkEngineEO(b *testing.B) {
	for _, parallel := range []int{1, 16} {
		b.Run("parallel="+strconv.Itoa(parallel), func(b *testing.B) {
			benchmarkEO(b, 10_000, parallel)
		})
	}
}

func benchmarkEO(b *testing.B, n, parallel int) {
	var elapsed time.Duration
	var commits uint64
	for range b.N {
		b.StopTimer()
		d, c := runEO(b, n, parallel)
		elapsed += d
		commits += c
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(commits)/float64(n*b.N), "commits/msg")
	b.ReportMetric(0, "ns/op") // the setup dominates a run; msgs/s is the figure
}

// runEO runs one engine on a fresh store until n messages are delivered and
// returns the time from the first send to the last DLVD and the commits
// made in between.
func runEO(b *testing.B, n, parallel int) (time.Duration, uint64) {
	st, err := bolt.Open(filepath.Join(b.TempDir(), "q.db"), bolt.Options{})
	require.NoError(b, err)
	defer st.Close()
	if parallel > 1 {
		require.NoError(b, st.Update(context.Background(), func(w store.Writer) error {
			if err := w.SetParam(domain.Param{Name: placement.ParamEOInbound, Sub: "CENTRAL", Value: parallel}); err != nil {
				return err
			}
			return w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Value: parallel})
		}))
	}
	cfg := engine.Config{
		Role: domain.RoleCentral, Workers: 16, EOWindow: 32,
		Retry:           engine.Retry{Count: 3, Interval: time.Second},
		Blacklisting:    engine.Blacklisting{Enabled: true, Crashes: 2},
		ShutdownTimeout: 5 * time.Second,
	}
	receivers := map[string]receiver.Receiver{"NULL": receiver.Discard{}}
	var delivered atomic.Int64
	all := make(chan struct{})
	eng, err := engine.New(engine.Options{Store: st, Config: cfg, Receivers: receivers, Observe: func(e engine.Event) {
		switch e.Kind {
		case engine.EventDelivered:
			if delivered.Add(1) == int64(n) {
				close(all)
			}
		case engine.EventFailed, engine.EventWaiting:
			b.Errorf("message %s: %s: %s", e.Message.ID, e.Kind, e.Message.Error)
		}
	}})
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(b, <-done)
	}()

	svc := local.New(st, local.Options{Actor: "bench"})
	payload := make([]byte, 512)
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"NULL"}, Interface: "OrderCreate",
			Payload: payload}
	}
	const batch = 1000
	commits0 := st.Commits()
	start := time.Now()
	for i := 0; i < n; i += batch {
		_, err := svc.Send(ctx, reqs[i:min(i+batch, n)])
		require.NoError(b, err)
		eng.Notify()
	}
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("only %d of %d messages delivered after 10 minutes", delivered.Load(), n)
	}
	elapsed := time.Since(start)
	commits := st.Commits() - commits0
	b.Logf("%d messages, parallel %d: %s, %.0f msgs/s, %.2f commits/msg",
		n, parallel, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), float64(commits)/float64(n))
	return elapsed, commits
}
