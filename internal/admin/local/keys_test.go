package local_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// keyed returns an EO send request from ERP to WMS with an idempotency key.
func keyed(key, payload string) domain.SendRequest {
	r := eo(payload)
	r.Key = key
	return r
}

// TestSendKeyRepeatChangesNothing: a repeat stores nothing — no message, no
// counter, no history entry — whatever status its message has reached.
func TestSendKeyRepeatChangesNothing(t *testing.T) {
	t.Parallel()

	b := setup(t)
	first := b.sendOne(t, keyed("order-4711", "x"))
	b.ndlv(t, first.ID, domain.ErrorPermanent, "HTTP 400")
	before := b.snapshot(t)

	sent, err := b.svc.Send(b.ctx, []domain.SendRequest{keyed("order-4711", "x")})
	require.NoError(t, err)
	require.True(t, sent[0].Duplicate)
	require.Equal(t, first.ID, sent[0].ID)
	require.Equal(t, domain.StatusNDLV, sent[0].Status, "the status as it is now")
	require.Equal(t, before, b.snapshot(t))
}

// TestSendKeyRoutedAtSend: a message that routing moved on, or split, at
// send is found by its key all the same, under the id its producer got.
func TestSendKeyRoutedAtSend(t *testing.T) {
	t.Parallel()

	t.Run("one receiver", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		first := b.sendOne(t, keyed("k", "x"))
		require.Equal(t, domain.Outbound, first.Stage, "moved on at send")
		sent, err := b.svc.Send(b.ctx, []domain.SendRequest{keyed("k", "x")})
		require.NoError(t, err)
		require.True(t, sent[0].Duplicate)
		require.Equal(t, first.ID, sent[0].ID)
		require.Equal(t, first.Queue, sent[0].Queue)

		other := keyed("k", "x")
		other.Receivers = []string{"ARCHIVE"}
		_, err = b.svc.Send(b.ctx, []domain.SendRequest{other})
		require.ErrorIs(t, err, domain.ErrConflict)
		require.ErrorContains(t, err, "which differs in receivers (WMS then, ARCHIVE now)",
			"the receivers named at send, not the one routing chose")
	})

	t.Run("by the routing rules", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true, routes: []placement.Rule{{Sender: "ERP", Receivers: []string{"WMS"}}}})
		req := keyed("k", "x")
		req.Receivers = nil
		first := b.sendOne(t, req)
		require.Equal(t, "WMS", first.Receiver)
		sent, err := b.svc.Send(b.ctx, []domain.SendRequest{req})
		require.NoError(t, err)
		require.True(t, sent[0].Duplicate, "no receivers named then or now: the same message")
		require.Equal(t, first.ID, sent[0].ID)
	})

	t.Run("several receivers split", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		req := keyed("k", "x")
		req.Receivers = []string{"WMS", "ARCHIVE"}
		first := b.sendOne(t, req)
		require.Equal(t, domain.StatusDLVD, first.Status, "split")
		before := b.snapshot(t)

		req.Receivers = []string{"ARCHIVE", "WMS"}
		sent, err := b.svc.Send(b.ctx, []domain.SendRequest{req})
		require.NoError(t, err)
		require.True(t, sent[0].Duplicate, "receivers are a set: their order is no difference")
		require.Equal(t, first.ID, sent[0].ID, "the message the producer sent, not a child")
		require.Equal(t, before, b.snapshot(t), "no second split")
	})
}
