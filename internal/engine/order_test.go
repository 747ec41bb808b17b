package engine_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// sendOrdered sends n EOIO messages of one app queue, payloads "0".."n-1",
// in batches while the engine runs, so that messages arrive during
// deliveries too.
func sendOrdered(t *testing.T, b *testBundle, n, batch int) []string {
	t.Helper()
	var want []string
	for start := 0; start < n; start += batch {
		var reqs []domain.SendRequest
		for i := start; i < min(start+batch, n); i++ {
			want = append(want, strconv.Itoa(i))
			reqs = append(reqs, eoio("WMS", "ORDERS", strconv.Itoa(i)))
		}
		b.send(t, reqs...)
	}
	return want
}

func TestEOIOKeepsOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	b.start(t)
	want := sendOrdered(t, b, 50, 7)
	b.waitDelivered(t, 50)
	require.Equal(t, want, ep.accepted())
	require.Equal(t, want, payloads(ep.all()), "each message arrives once")
}

func TestEOIOKeepsOrderThroughATransientFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.newEndpoint(t, "WMS")
	const k = "17"
	ep.respond(func(_ *http.Request, a arrival, nth int) int {
		if a.Payload == k && nth < 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	b.start(t)
	want := sendOrdered(t, b, 50, 7)
	b.waitDelivered(t, 50)

	require.Equal(t, want, ep.accepted())
	var arrivals []string
	arrivals = append(arrivals, want[:17]...)
	arrivals = append(arrivals, k, k, k)
	arrivals = append(arrivals, want[18:]...)
	require.Equal(t, arrivals, payloads(ep.all()), "no message overtakes the one that waits")

	var retried *domain.Message
	for _, a := range ep.all() {
		if a.Payload == k {
			retried = b.message(t, a.ID)
		}
	}
	require.Equal(t, domain.StatusDLVD, retried.Status)
	require.Equal(t, 3, retried.Attempts)
}
