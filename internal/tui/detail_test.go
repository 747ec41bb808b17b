package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// TestDetailShowsTheKey: the message detail names the producer's
// idempotency key when the message has one, and says nothing of keys when
// it has none.
func TestDetailShowsTheKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sent, err := b.svc.Send(context.Background(), []domain.SendRequest{{QoS: domain.EO, Sender: "ERP",
		Receivers: []string{"WMS"}, Key: "order 4711/ÄÖ", Payload: []byte("x")}})
	require.NoError(t, err)

	m := New(options(b.svc))
	m.view, m.detail = viewDetail, &detailPage{id: sent[0].ID}
	m.Update(m.load()())
	require.Contains(t, m.detail.lines(now), "key:             order 4711/ÄÖ")

	m.view, m.detail = viewDetail, &detailPage{id: b.head}
	m.Update(m.load()())
	require.NotContains(t, strings.Join(m.detail.lines(now), "\n"), "key:")
}
