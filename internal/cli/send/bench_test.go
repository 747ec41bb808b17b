package send_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/send"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// BenchmarkSendJSONL10k measures `send --jsonl` of 10,000 messages as the
// command runs it: check and spool every line, then read them back and store them through the
// local admin service into a fresh bbolt store with real fsyncs. It reports
// the store commits the batch took.
func BenchmarkSendJSONL10k(b *testing.B) {
	const n = 10_000
	var input bytes.Buffer
	for i := range n {
		if i%2 == 0 {
			fmt.Fprintf(&input, `{"qos":"EO","sender":"ERP","receiver":"WMS","interface":"OrderCreate","payload":"<order id=\"%d\"/>"}`+"\n", i)
		} else {
			fmt.Fprintf(&input, `{"qos":"EOIO","sender":"ERP","receiver":"WMS","app_queue":"ORDERS_DE","payload":"<order id=\"%d\"/>"}`+"\n", i)
		}
	}
	ctx := context.Background()
	var commits uint64
	for b.Loop() {
		b.StopTimer()
		st, err := bolt.Open(filepath.Join(b.TempDir(), "q.db"), bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		svc := local.New(st, local.Options{})
		before := st.Commits()
		b.StartTimer()

		sp, err := send.SpoolJSONL(ctx, bytes.NewReader(input.Bytes()), domain.DefaultMaxPayload)
		if err != nil {
			b.Fatal(err)
		}
		sent := 0
		err = sp.Batches(func(reqs []domain.SendRequest, _ []int) error {
			msgs, err := svc.Send(ctx, reqs)
			sent += len(msgs)
			return err
		})
		sp.Close()
		if err != nil || sent != n {
			b.Fatalf("sent %d of %d: %v", sent, n, err)
		}

		b.StopTimer()
		commits = st.Commits() - before
		svc.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(commits), "commits/op")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
