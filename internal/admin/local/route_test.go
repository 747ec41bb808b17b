package local_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// Where an engine runs in the process, a send whose inbound queue would
// start the message at once routes it in the send's transaction (§3): the
// producer's id is the one in the receiver's queue, and the history shows
// the routing.
func TestSendRoutesAtOnceWhenTheInboundQueueWouldStartIt(t *testing.T) {
	t.Parallel()

	t.Run("one receiver", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		m := b.sendOne(t, eoio("ORDERS_DE", "1"))
		require.Equal(t, "XBQO2107ORDERS_DE", m.Queue, "moved on to the receiver's queue")
		require.Equal(t, domain.Outbound, m.Stage)
		require.Equal(t, "XBQIORDERS_DE", m.InboundQueue)
		require.Equal(t, domain.StatusTBDL, m.Status)
		require.Equal(t, uint64(1), m.Seq)

		got := b.message(t, m.ID)
		require.Equal(t, m.Queue, got.Queue, "the id the producer got is the stored message")
		require.Len(t, got.History, 2)
		require.Equal(t, "local:test", got.History[0].Actor)
		require.Contains(t, got.History[1].Reason, "moved on to XBQO2107ORDERS_DE")

		in, err := b.svc.Queue(b.ctx, "XBQIORDERS_DE")
		require.NoError(t, err)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1}, in.Counts, "the inbound queue counts what passed through")
		require.Equal(t, b.recount(t), b.counters(t))
	})

	t.Run("by the routing rules", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true, routes: []placement.Rule{{Sender: "ERP", Receivers: []string{"WMS"}}}})
		req := eo("x")
		req.Receivers = nil
		m := b.sendOne(t, req)
		require.Equal(t, domain.Outbound, m.Stage)
		require.Equal(t, "WMS", m.Receiver)
	})

	t.Run("no receiver is the engine's to decide", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		req := eo("x")
		req.Receivers = nil
		m := b.sendOne(t, req)
		require.Equal(t, domain.Inbound, m.Stage)
		require.Equal(t, domain.StatusTBDL, m.Status)
	})

	t.Run("several receivers split", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		req := eo("x")
		req.Receivers = []string{"WMS", "ARCHIVE"}
		m := b.sendOne(t, req)
		require.Equal(t, domain.StatusDLVD, m.Status)
		h := b.message(t, m.ID).History
		require.Contains(t, h[len(h)-1].Reason, "split into 2")
		var children []string
		require.NoError(t, b.svc.Messages(b.ctx, admin.MessageFilter{}, func(c *domain.Message) error {
			if c.ParentID == m.ID {
				children = append(children, c.Receiver)
			}
			return nil
		}))
		require.ElementsMatch(t, []string{"WMS", "ARCHIVE"}, children)
		require.Equal(t, b.recount(t), b.counters(t))
	})

	t.Run("a stopped inbound queue keeps it", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		b.sendOne(t, eoio("ORDERS_DE", "1"))
		_, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBQIORDERS_DE"}})
		require.NoError(t, err)
		m := b.sendOne(t, eoio("ORDERS_DE", "2"))
		require.Equal(t, "XBQIORDERS_DE", m.Queue)
		require.Equal(t, domain.StatusTBDL, m.Status)
		require.Len(t, b.message(t, m.ID).History, 1)
	})

	t.Run("a message ahead keeps it", func(t *testing.T) {
		t.Parallel()

		b := setupWith(t, setupOpts{routeAtSend: true})
		b.sendOne(t, eoio("ORDERS_DE", "1"))
		_, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBQIORDERS_DE"}})
		require.NoError(t, err)
		first := b.sendOne(t, eoio("ORDERS_DE", "2"))
		_, err = b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStart, Targets: []string{"XBQIORDERS_DE"}})
		require.NoError(t, err)
		second := b.sendOne(t, eoio("ORDERS_DE", "3"))
		require.Equal(t, "XBQIORDERS_DE", first.Queue)
		require.Equal(t, "XBQIORDERS_DE", second.Queue, "it may not pass the message ahead of it")
	})

	t.Run("off without an engine", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		m := b.sendOne(t, eoio("ORDERS_DE", "1"))
		require.Equal(t, "XBQIORDERS_DE", m.Queue)
	})
}
