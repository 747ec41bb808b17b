package bolt

import (
	"encoding/binary"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// benchPayload is the payload of every benchmark message: a small order.
const benchPayload = `<order id="4711" customer="C-1002" currency="EUR">` +
	`<line sku="A-100" qty="2" price="19.90"/><line sku="B-200" qty="1" price="5.00"/>` +
	`<line sku="C-300" qty="7" price="1.25"/><ship to="DE-10115 Berlin" by="2025-06-03"/></order>`

// openBenchStore opens a store that syncs every commit, as in production.
func openBenchStore(b *testing.B) *Store {
	b.Helper()
	path := filepath.Join(b.TempDir(), "queuectl.db")
	s, err := Open(path, Options{})
	require.NoError(b, err)
	b.Cleanup(func() {
		require.NoError(b, s.Close())
		checkFile(b, path)
	})
	return s
}

// benchMessages returns n new EO inbound messages spread over four queues.
func benchMessages(n int) []*domain.Message {
	msgs := make([]*domain.Message, n)
	for i := range msgs {
		msgs[i] = storetest.InQueue(storetest.NewMessage(), domain.EOInboundQueue(domain.RoleCentral, i%4))
	}
	return msgs
}

// insertAll stores msgs in one Update.
func insertAll(s *Store, b *testing.B, msgs []*domain.Message) error {
	return s.Update(b.Context(), func(w store.Writer) error {
		for _, m := range msgs {
			if err := w.Insert(m.Clone(), []byte(benchPayload), storetest.Entry("received")); err != nil {
				return err
			}
		}
		return nil
	})
}

// report adds commits per message and messages per second to the result.
func report(b *testing.B, s *Store, commitsBefore uint64, msgs int) {
	b.ReportMetric(float64(s.Commits()-commitsBefore)/float64(msgs), "commits/msg")
	b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkInsertBatch stores 10,000 messages per op in Updates of 1,000,
// as `send --jsonl` does, with an fsync per commit.
func BenchmarkInsertBatch(b *testing.B) {
	const messages, perUpdate = 10_000, 1_000
	s := openBenchStore(b)
	start := s.Commits()
	for b.Loop() {
		for sent := 0; sent < messages; sent += perUpdate {
			b.StopTimer()
			msgs := benchMessages(perUpdate)
			b.StartTimer()
			if err := insertAll(s, b, msgs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(s.Commits()-start)/float64(b.N), "commits/op")
	report(b, s, start, messages*b.N)
}

// BenchmarkInsertConcurrent has 16 goroutines store 64 messages each per
// op, every message in an Update of its own: bbolt's Batch groups them, so
// commits per message fall well below one.
func BenchmarkInsertConcurrent(b *testing.B) {
	const workers, perWorker = 16, 64
	s := openBenchStore(b)
	start := s.Commits()
	for b.Loop() {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for _, m := range benchMessages(perWorker) {
					if err := insertAll(s, b, []*domain.Message{m}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	report(b, s, start, workers*perWorker*b.N)
}

// BenchmarkInsertSequential stores one message per Update from one
// goroutine: the baseline of one commit per message, and the latency a lone
// writer pays for grouping (batchDelay) and for the fsync.
func BenchmarkInsertSequential(b *testing.B) {
	s := openBenchStore(b)
	start := s.Commits()
	for b.Loop() {
		if err := insertAll(s, b, benchMessages(1)); err != nil {
			b.Fatal(err)
		}
	}
	report(b, s, start, b.N)
}

// benchEOIOQueue fills a store with n TBDL messages of one EOIO outbound
// queue, as routing leaves them, joins a node and claims the first.
func benchEOIOQueue(b testing.TB, s *Store, n int) (store.Node, *store.ClaimResult) {
	b.Helper()
	parent := storetest.NewEOIOMessage("BENCH")
	for sent := 0; sent < n; sent += 1000 {
		require.NoError(b, s.Update(b.Context(), func(w store.Writer) error {
			for range min(1000, n-sent) {
				m := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
				m.ParentID = ""
				if err := w.Insert(m, []byte(benchPayload), storetest.Entry("received")); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	joined, err := s.Join(b.Context(), store.JoinParams{ID: "N1", TTL: time.Minute, Heartbeat: time.Second,
		Receivers: []string{storetest.ReceiverWMS}})
	require.NoError(b, err)
	claim, err := s.Claim(b.Context(), benchClaim(joined.Node))
	require.NoError(b, err)
	require.Len(b, claim.Claimed, 1)
	return joined.Node, claim
}

func benchClaim(node store.Node) store.ClaimParams {
	return store.ClaimParams{Node: node, Limit: 32, Window: 64, RouteLimit: 64, Candidates: store.CandidatesSkip,
		Receivers: []string{storetest.ReceiverWMS}}
}

// BenchmarkEOIOStep is one step of an EOIO queue: message k's outcome and
// message k+1's claim in one commit, synced, as the engine records them.
// It reports the page writes and the bytes of pages of a step's commit.
func BenchmarkEOIOStep(b *testing.B) {
	s := openBenchStore(b)
	node, claim := benchEOIOQueue(b, s, b.N+1)
	writes0, bytes0 := s.PageWrites()
	start := s.Commits()
	b.ResetTimer()
	for range b.N {
		c := benchClaim(node)
		res, err := s.Record(b.Context(), store.RecordParams{Node: node, Claim: &c, Outcomes: []store.Outcome{{
			ID: claim.Claimed[0].Message.ID, Epoch: claim.Claimed[0].Epoch, Kind: store.OutcomeDelivered}}})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Claim.Claimed) != 1 {
			b.Fatalf("claimed %d messages, want 1 (conflicts %v, damaged %v, applied %v)", len(res.Claim.Claimed), res.Conflicts, res.Claim.Damaged, res.Applied[0])
		}
		claim = res.Claim
	}
	writes1, bytes1 := s.PageWrites()
	commits := float64(s.Commits() - start)
	b.ReportMetric(float64(writes1-writes0)/commits, "pagewrites/commit")
	b.ReportMetric(float64(bytes1-bytes0)/commits, "pagebytes/commit")
	report(b, s, start, b.N)
}

// BenchmarkBboltSinglePut is the ceiling of one EOIO queue, as compare.sh
// measures it (peers bbolt-single): one 200-byte put per transaction into
// one bucket of bbolt with its defaults, synced. It reports the page
// writes and bytes of pages of a commit, to set beside BenchmarkEOIOStep's.
func BenchmarkBboltSinglePut(b *testing.B) {
	db, err := bbolt.Open(filepath.Join(b.TempDir(), "single.db"), 0o600, nil)
	require.NoError(b, err)
	defer func() { require.NoError(b, db.Close()) }()
	require.NoError(b, db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket([]byte("q"))
		return err
	}))
	val := make([]byte, 200)
	before := db.Stats().TxStats
	b.ResetTimer()
	for i := range b.N {
		if err := db.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("q")).Put(binary.BigEndian.AppendUint64(nil, uint64(i)), val)
		}); err != nil {
			b.Fatal(err)
		}
	}
	after := db.Stats().TxStats
	b.ReportMetric(float64(after.GetWrite()-before.GetWrite())/float64(b.N), "pagewrites/commit")
	b.ReportMetric(float64(after.GetPageAlloc()-before.GetPageAlloc())/float64(b.N), "pagebytes/commit")
}
