package engine_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/engine"
)

// TestCheckBackCommitIsDelivered: a running engine checks back with the
// producer of a message prepared and left PEND, commits it on the answer,
// and delivers it at once.
func TestCheckBackCommitIsDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	clk := newClock()
	b.now = clk.Now
	ep := b.newEndpoint(t, "WMS")
	producer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"state":"commit"}`)
	}))
	t.Cleanup(producer.Close)
	b.cfg.Senders = map[string]config.Sender{"ERP": {CheckURL: producer.URL + "/tx-check"}}
	b.cfg.Tx = config.Tx{CheckAfter: 30 * time.Second, CheckInterval: 30 * time.Second, MaxChecks: 10, CheckTimeout: 5 * time.Second}
	req := eo("WMS", "order 4711")
	req.Prepare = true
	p := b.send(t, req)[0]
	b.start(t)
	b.waitSettled(t, "the engine started", func() bool { return true })
	require.Empty(t, ep.all(), "a prepared message is not delivered")

	clk.Advance(31 * time.Second) // past tx.check_after
	b.eng.Notify()
	b.waitDelivered(t, 1)
	require.Equal(t, []string{"order 4711"}, ep.accepted())
	b.waitFor(t, "the check-back's report", func() bool { return b.count(engine.EventCheckCommitted) == 1 })
	require.Contains(t, transitions(b.message(t, p.ID).History), "PEND>TBDL")
}
