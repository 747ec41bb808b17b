package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/metrics"
)

// waitChecks waits for n check-back events.
func (b *testBundle) waitChecks(t *testing.T, n int) {
	t.Helper()
	timeout := time.NewTimer(deadline)
	defer timeout.Stop()
	for {
		b.mu.Lock()
		got := b.checks
		b.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-b.changed:
		case <-timeout.C:
			t.Fatalf("waited %s for %d check-backs; got %d", deadline, n, got)
		}
	}
}

func TestMetricsOfCheckBacks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The producer answers by the order in the header; order 3 it does
	// not know, and the engine gives up on it after one check.
	producer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"X-Order":"1"`):
			io.WriteString(w, `{"state":"commit"}`)
		case strings.Contains(string(body), `"X-Order":"2"`):
			io.WriteString(w, `{"state":"rollback"}`)
		default:
			io.WriteString(w, `{"state":"unknown"}`)
		}
	}))
	t.Cleanup(producer.Close)
	b.cfg.Senders = map[string]config.Sender{"ERP": {CheckURL: producer.URL}}
	b.cfg.Tx = config.Tx{CheckAfter: time.Millisecond, CheckInterval: time.Minute, MaxChecks: 1, CheckTimeout: time.Minute}
	var reqs []domain.SendRequest
	for _, order := range []string{"1", "2", "3"} {
		reqs = append(reqs, domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Prepare: true,
			Headers: map[string]string{"X-Order": order}, Payload: []byte("order " + order)})
	}
	_, err := b.svc.Send(t.Context(), reqs)
	require.NoError(t, err)

	fams := b.scrape(t)
	require.Zero(t, fams.counter(t, "queuectl_tx_checks_total", map[string]string{"result": metrics.CheckCommit}), "at zero before the first check")
	require.Zero(t, fams.gauge(t, "queuectl_tx_stuck_messages", nil))

	b.start(t)
	b.waitChecks(t, 3) // commit, rollback, and unanswered: stuck
	fams = b.scrape(t)
	require.Equal(t, 1.0, fams.counter(t, "queuectl_tx_checks_total", map[string]string{"result": metrics.CheckCommit}))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_tx_checks_total", map[string]string{"result": metrics.CheckRollback}))
	require.Equal(t, 1.0, fams.counter(t, "queuectl_tx_checks_total", map[string]string{"result": metrics.CheckUnanswered}))
	require.Equal(t, 1.0, fams.gauge(t, "queuectl_tx_stuck_messages", nil))
}
