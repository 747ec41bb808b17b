package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

type routeBundle struct {
	*testBundle
	wms     *endpoint
	archive string // where the ARCHIVE command writes each payload, named by id
	dropbox string // the AUDIT file receiver's directory
}

// setupRoutes configures three receivers of three types and §8's routing
// rules: ERP's OrderCreate goes to WMS and ARCHIVE, everything of ERP to
// AUDIT and WMS.
func setupRoutes(t *testing.T) *routeBundle {
	t.Helper()
	b := &routeBundle{testBundle: setup(t), archive: t.TempDir(), dropbox: t.TempDir()}
	b.wms = b.newEndpoint(t, "WMS")
	script := filepath.Join(t.TempDir(), "archive.sh")
	require.NoError(t, receiver.WriteExecutable(script, []byte("#!/bin/sh\ncat > \"$1/$QUEUECTL_MESSAGE_ID\"\n")))
	b.cfg.Receivers["ARCHIVE"] = config.Receiver{Type: "exec", Command: []string{script, b.archive}}
	b.cfg.Receivers["AUDIT"] = config.Receiver{Type: "file", Dir: b.dropbox}
	b.cfg.Routes = []config.Route{
		{Sender: "ERP", Interface: "OrderCreate", Receivers: []string{"WMS", "ARCHIVE"}},
		{Sender: "ERP", Receivers: []string{"AUDIT", "WMS"}},
	}
	return b
}

func routed(qos domain.QoS, iface, payload string) domain.SendRequest {
	r := domain.SendRequest{QoS: qos, Sender: "ERP", Interface: iface, Payload: []byte(payload),
		Headers: map[string]string{"X-Trace": "t-" + payload}}
	if qos == domain.EOIO {
		r.AppQueue = "ORDERS"
	}
	return r
}

func TestRoutingCreatesOneOutboundMessagePerReceiver(t *testing.T) {
	t.Parallel()
	b := setupRoutes(t)

	// At the moment the engine reports an inbound message routed, its
	// outbound messages exist: they were stored in the same transaction.
	var mu sync.Mutex
	seen := map[string]int{}
	b.hook = func(e engine.Event) {
		if e.Kind != engine.EventRouted {
			return
		}
		n := 0
		_ = b.st.View(b.ctx, func(r store.Reader) error {
			return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
				if m.ParentID == e.Message.ID {
					n++
				}
				return nil
			})
		})
		mu.Lock()
		seen[e.Message.ID] = n
		mu.Unlock()
	}
	in := b.send(t,
		routed(domain.EO, "OrderCreate", "eo order"),
		routed(domain.EOIO, "OrderCreate", "eoio order"),
		routed(domain.EO, "Invoice", "invoice"))
	b.start(t)
	b.waitDelivered(t, 3+3+2)

	mu.Lock()
	require.Equal(t, map[string]int{in[0].ID: 3, in[1].ID: 3, in[2].ID: 2}, seen)
	mu.Unlock()

	tests := []struct {
		in        *domain.Message
		receivers []string
		queue     func(r string) string
	}{
		{in[0], []string{"WMS", "ARCHIVE", "AUDIT"}, func(r string) string { return "XBTO" + code4(r) }},
		{in[1], []string{"WMS", "ARCHIVE", "AUDIT"}, func(r string) string { return "XBQO" + code4(r) + "ORDERS" }},
		{in[2], []string{"AUDIT", "WMS"}, func(r string) string { return "XBTO" + code4(r) }},
	}
	for _, tt := range tests {
		parent := b.message(t, tt.in.ID)
		require.Equal(t, domain.StatusDLVD, parent.Status)
		done := parent.History[len(parent.History)-1]
		require.Equal(t, "DLNG>DLVD", transitions([]domain.HistoryEntry{done})[0])
		require.Equal(t, fmt.Sprintf("receiver determination (by routing rules): %s; split into %d",
			strings.Join(tt.receivers, ", "), len(tt.receivers)), done.Reason)

		out := b.outbound(t, tt.in.ID)
		require.Len(t, out, len(tt.receivers))
		var got []string
		for _, m := range out {
			got = append(got, m.Receiver)
			require.Equal(t, tt.queue(m.Receiver), m.Queue)
			require.Equal(t, domain.Outbound, m.Stage)
			require.Equal(t, tt.in.QoS, m.QoS)
			require.Equal(t, tt.in.AppQueue, m.AppQueue)
			require.Equal(t, tt.in.Interface, m.Interface)
			require.Equal(t, "ERP", m.Sender)
			require.Equal(t, tt.in.Headers, m.Headers)
			require.Equal(t, tt.in.Size, m.Size)
			require.Equal(t, domain.StatusDLVD, m.Status)
			h := b.message(t, m.ID).History
			require.Equal(t, "receiver determination", h[0].Reason)
			require.Equal(t, tt.in.ID, m.ParentID)
			require.Equal(t, done.At, h[0].At, "created in the transaction that made the parent DLVD")
			require.Equal(t, domain.StatusTBDL, h[0].To)
		}
		require.ElementsMatch(t, tt.receivers, got)
	}

	// Each receiver got the payloads byte for byte.
	require.ElementsMatch(t, []string{"eo order", "eoio order", "invoice"}, b.wms.accepted())
	for _, m := range append(b.outbound(t, in[0].ID), b.outbound(t, in[1].ID)...) {
		var dir string
		switch m.Receiver {
		case "ARCHIVE":
			dir = b.archive
		case "AUDIT":
			dir = b.dropbox
		default:
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, m.ID))
		require.NoError(t, err)
		parent := b.message(t, m.ParentID)
		require.Equal(t, map[domain.QoS]string{domain.EO: "eo order", domain.EOIO: "eoio order"}[parent.QoS], string(got))
	}
}

func TestNamedReceiversWinOverRoutes(t *testing.T) {
	t.Parallel()
	b := setupRoutes(t)
	req := routed(domain.EO, "OrderCreate", "only for audit")
	req.Receivers = []string{"AUDIT"}
	in := b.send(t, req)
	b.start(t)
	b.waitDelivered(t, 1)

	out := b.outbound(t, in[0].ID)
	require.Len(t, out, 1)
	require.Equal(t, "AUDIT", out[0].Receiver)
	var reasons []string
	for _, e := range b.message(t, in[0].ID).History {
		reasons = append(reasons, e.Reason)
	}
	require.Contains(t, reasons, "receiver determination (named at send time): AUDIT; moved on to "+out[0].Queue)
	require.Empty(t, b.wms.all())
}

func TestEOOutboundParallelSpreadsOutboundQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newEndpoint(t, "WMS")
	b.cfg.Receivers["NULL"] = config.Receiver{Type: "discard"}
	b.rand = counter()
	b.update(t, func(w store.Writer) error {
		if err := w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Value: 4}); err != nil {
			return err
		}
		return w.SetParam(domain.Param{Name: placement.ParamEOOutbound, Sub: "NULL", Value: 2})
	})
	var reqs []domain.SendRequest
	for range 8 {
		reqs = append(reqs, eo("WMS", "w"))
	}
	for range 8 {
		reqs = append(reqs, eo("NULL", "n"))
	}
	reqs = append(reqs, eoio("WMS", "ORDERS", "in order"))
	in := b.send(t, reqs...)
	b.start(t)
	b.waitDelivered(t, len(reqs))

	perQueue := map[string]int{}
	for _, m := range in {
		out := b.outboundOf(t, m.ID)
		require.Equal(t, domain.StatusDLVD, out.Status)
		perQueue[out.Queue]++
	}
	w, n := "XBTO"+code4("WMS"), "XBTO"+code4("NULL")
	require.Equal(t, map[string]int{
		w + "0000": 2, w + "0001": 2, w + "0002": 2, w + "0003": 2, // the default for all receivers
		n + "0000": 4, n + "0001": 4, // NULL's own value
		"XBQO" + code4("WMS") + "ORDERS": 1, // EOIO is not spread
	}, perQueue)
}
