package engine_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
)

// An outcome event says how long its message was DLNG, on the engine's
// clock: the receiver here takes exactly 3s of the test's clock per
// attempt, whatever the outcome. One worker, so that no delivery's time
// runs into another's.
func TestOutcomeEventsCarryTheDeliveryDuration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.cfg.Engine.Workers = 1
	b.cfg.Engine.Retry.Interval = 0 // the retry is due at once
	clk := newClock()
	b.now = clk.Now
	ep := b.newEndpoint(t, "WMS")
	ep.respond(func(_ *http.Request, a arrival, nth int) int {
		clk.Advance(3 * time.Second)
		switch {
		case a.Payload == "bad":
			return http.StatusBadRequest
		case a.Payload == "flaky" && nth == 0:
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	b.start(t)
	b.send(t, eo("WMS", "ok"), eoio("WMS", "A", "bad"), eoio("WMS", "B", "flaky"))
	b.waitSettled(t, "every outcome", func() bool {
		return b.count(engine.EventDelivered) == 2 && b.count(engine.EventFailed) == 1 && b.count(engine.EventWaiting) == 1
	})

	for _, kind := range []engine.EventKind{engine.EventDelivered, engine.EventWaiting, engine.EventFailed} {
		for _, ev := range b.eventsOf(kind) {
			require.Equal(t, 3*time.Second, ev.Duration, "%s %s", kind, ev.Message.ID)
		}
	}
	for _, ev := range b.eventsOf(engine.EventRouted) {
		require.Zero(t, ev.Duration, "routing calls no receiver")
	}
}

// Crash recovery reports each message it returns to TBDL, as it reports
// each one it blacklists.
func TestCrashRecoveryReportsRequeuedMessages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newEndpoint(t, "WMS")
	first, second := outboundMsg("WMS", ""), outboundMsg("WMS", "A")
	b.inFlightOnDeadNode(t, first, 0)
	b.inFlightOn(t, "dead-node-2", second, 1) // alone on its node: blamed
	b.start(t)
	b.waitSettled(t, "recovery", func() bool { return b.count(engine.EventDelivered) == 1 })

	requeued := b.eventsOf(engine.EventRequeued)
	require.Len(t, requeued, 1)
	require.Equal(t, first.ID, requeued[0].Message.ID)
	require.Equal(t, domain.StatusTBDL, requeued[0].Message.Status)
	require.Equal(t, 1, requeued[0].Message.Crashes)
	blacklisted := b.eventsOf(engine.EventBlacklisted)
	require.Len(t, blacklisted, 1)
	require.Equal(t, second.ID, blacklisted[0].Message.ID)
}
