package local_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

type testBundle struct {
	ctx context.Context
	svc *local.Service
	st  store.Store
	// now is the service's clock; tests move it to spread created_at.
	now time.Time
	// randN records the n of every draw of an EO inbound slot; each draw
	// returns n-1, the highest slot.
	randN []int
}

type setupOpts struct {
	role        domain.Role
	maxPayload  int64
	routeAtSend bool
	routes      []placement.Rule
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return setupWith(t, setupOpts{})
}

func setupWith(t *testing.T, o setupOpts) *testBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	b := &testBundle{ctx: context.Background(), st: st, now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	b.svc = local.New(st, local.Options{
		Role:        o.role,
		MaxPayload:  o.maxPayload,
		Actor:       "local:test",
		Receivers:   []string{"WMS", "ARCHIVE"},
		RouteAtSend: o.routeAtSend,
		Routes:      o.routes,
		Now:         func() time.Time { return b.now },
		Rand: func(n int) int {
			b.randN = append(b.randN, n)
			return n - 1
		},
	})
	t.Cleanup(func() { require.NoError(t, b.svc.Close()) })
	return b
}

// eo returns a valid EO send request from ERP to WMS.
func eo(payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Interface: "OrderCreate", Payload: []byte(payload)}
}

// eoio returns a valid EOIO send request of appQueue from SHOP to WMS.
func eoio(appQueue, payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"}, AppQueue: appQueue, Payload: []byte(payload)}
}

func (b *testBundle) send(t *testing.T, reqs ...domain.SendRequest) []*domain.Message {
	t.Helper()
	sent, err := b.svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	require.Len(t, sent, len(reqs))
	return admin.SentMessages(sent)
}

func (b *testBundle) sendOne(t *testing.T, req domain.SendRequest) *domain.Message {
	t.Helper()
	return b.send(t, req)[0]
}

// move changes a message's status in the store, as the engine or an
// operator would, at the bundle's clock.
func (b *testBundle) move(t *testing.T, id string, from, to domain.Status, update func(*domain.Message)) *domain.Message {
	t.Helper()
	var m *domain.Message
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		var err error
		m, err = w.Transition(store.TransitionParams{
			ID: id, From: []domain.Status{from}, To: to, Update: update,
			History: domain.HistoryEntry{At: b.now, Actor: "engine", Reason: "test"},
		})
		return err
	}))
	return m
}

// ndlv takes a TBDL message through DLNG to NDLV with the given error class.
func (b *testBundle) ndlv(t *testing.T, id string, class domain.ErrorClass, text string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts++
		m.Error, m.ErrorClass = text, class
		m.Blacklisted = class == domain.ErrorCrash
	})
}

// deliver takes a TBDL message through DLNG to DLVD.
func (b *testBundle) deliver(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusDLVD, func(m *domain.Message) { m.Attempts++ })
}

// outbound stores the outbound message of parent for receiver, as receiver
// determination would.
func (b *testBundle) outbound(t *testing.T, parent *domain.Message, receiver string) *domain.Message {
	t.Helper()
	m := &domain.Message{
		ID: domain.NewID(), QoS: parent.QoS, Sender: parent.Sender, Receiver: receiver,
		Interface: parent.Interface, AppQueue: parent.AppQueue, Stage: domain.Outbound,
		Status: domain.StatusTBDL, ParentID: parent.ID, CreatedAt: b.now, UpdatedAt: b.now,
	}
	if parent.QoS == domain.EOIO {
		m.Queue = domain.EOIOOutboundQueue(domain.PrefixXBQ, domain.Code4(receiver), parent.AppQueue)
	} else {
		m.Queue = domain.EOOutboundQueue(domain.Code4(receiver), 1, 0)
	}
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		return w.Insert(m, nil, domain.HistoryEntry{At: b.now, To: m.Status, Actor: "engine"})
	}))
	return m
}

func (b *testBundle) messages(t *testing.T, f admin.MessageFilter) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.svc.Messages(b.ctx, f, func(m *domain.Message) error {
		out = append(out, m)
		return nil
	}))
	return out
}

func (b *testBundle) queues(t *testing.T, f admin.QueueFilter) []*domain.Queue {
	t.Helper()
	var out []*domain.Queue
	require.NoError(t, b.svc.Queues(b.ctx, f, func(q *domain.Queue) error {
		out = append(out, q)
		return nil
	}))
	return out
}

func (b *testBundle) queueMessages(t *testing.T, name string, p admin.QueueMessagesParams) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.svc.QueueMessages(b.ctx, name, p, func(m *domain.Message) error {
		out = append(out, m)
		return nil
	}))
	return out
}

func ids(msgs []*domain.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func names(qs []*domain.Queue) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out
}
