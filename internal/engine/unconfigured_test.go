package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
)

// TestUnconfiguredReceiversAreNotClaimed: an engine started without a
// receiver that a backlog waits for leaves that backlog TBDL — no attempt,
// no DLNG, no NDLV, no EOIO queue blocked — delivers what it can, and says
// so; started again with the receiver, it delivers the backlog in order.
func TestUnconfiguredReceiversAreNotClaimed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	archive := b.newEndpoint(t, "ARCHIVE")
	backlog := b.send(t, eo("WMS", "E1"), eo("WMS", "E2"),
		eoio("WMS", "ORDERS", "O1"), eoio("WMS", "ORDERS", "O2"), eoio("WMS", "ORDERS", "O3"))
	// Behind the backlog in its inbound queues: routed only after it.
	b.send(t, eo("ARCHIVE", "A1"), eoio("ARCHIVE", "ORDERS", "A2"))
	b.start(t)

	b.waitSettled(t, "the ARCHIVE messages delivered", func() bool { return b.count(engine.EventDelivered) == 2 })
	require.ElementsMatch(t, []string{"A1", "A2"}, archive.accepted())
	require.Zero(t, b.count(engine.EventFailed), "log: %s", b.logSummary())
	for _, in := range backlog {
		m := b.outboundOf(t, in.ID)
		require.NotNil(t, m, "%s is routed: routing does not depend on the receiver", in.ID)
		require.Equal(t, domain.StatusTBDL, m.Status, "%s", m.Queue)
		require.Zero(t, m.Attempts)
		require.Equal(t, []string{">TBDL", "TBDL>TBDL"}, transitions(b.message(t, m.ID).History),
			"routed on, and nothing else happened to it")
	}
	eoQueue, eoioQueue := "XBTO"+code4("WMS"), "XBQO"+code4("WMS")+"ORDERS"
	require.Equal(t, domain.QueueUnconfigured, b.queueState(t, eoQueue))
	require.Equal(t, domain.QueueUnconfigured, b.queueState(t, eoioQueue))
	require.True(t, b.logged("receiver not configured on this node: its messages wait TBDL for a node that has it"),
		"log: %s", b.logSummary())
	require.NoError(t, b.shutdown(t))

	// With the receiver configured, the backlog goes out, EOIO in order.
	wms := b.newEndpoint(t, "WMS")
	b.start(t)
	b.waitDelivered(t, 2+len(backlog))
	got := wms.accepted()
	require.ElementsMatch(t, []string{"E1", "E2", "O1", "O2", "O3"}, got)
	var ordered []string
	for _, p := range got {
		if p[0] == 'O' {
			ordered = append(ordered, p)
		}
	}
	require.Equal(t, []string{"O1", "O2", "O3"}, ordered)
	require.Zero(t, b.count(engine.EventFailed))
}

// TestNoReceiversClaimNothing: an engine with no receiver at all routes,
// and delivers nothing; it does not spin either: it goes idle.
func TestNoReceiversClaimNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	in := b.send(t, eo("WMS", "E1"), eoio("WMS", "ORDERS", "O1"))
	b.start(t)
	b.waitSettled(t, "both routed", func() bool { return b.count(engine.EventRouted) == 2 })
	require.Equal(t, []domain.Status{domain.StatusTBDL, domain.StatusTBDL}, b.statusOf(t, in...))
	require.Zero(t, b.count(engine.EventFailed))
}
