package local_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

func TestSend(t *testing.T) {
	t.Parallel()

	b := setup(t)
	req := eo("<order id=\"4711\"/>")
	req.Headers = map[string]string{"X-Trace": "abc"}
	m := b.sendOne(t, req)

	require.NoError(t, domain.ValidID(m.ID))
	require.Equal(t, domain.EO, m.QoS)
	require.Equal(t, "ERP", m.Sender)
	require.Equal(t, []string{"WMS"}, m.Receivers)
	require.Equal(t, "OrderCreate", m.Interface)
	require.Equal(t, "XBTI0000", m.Queue, "EO_INBOUND_PARALLEL is unset: one queue, slot 0")
	require.Equal(t, domain.Inbound, m.Stage)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Equal(t, uint64(1), m.Seq)
	require.Equal(t, int64(len(req.Payload)), m.Size)
	require.Equal(t, b.now, m.CreatedAt)
	require.Equal(t, b.now, m.UpdatedAt)
	require.Equal(t, map[string]string{"X-Trace": "abc"}, m.Headers)

	got, err := b.svc.Message(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, []domain.HistoryEntry{{At: b.now, To: domain.StatusTBDL, Actor: "local:test", Reason: "sent"}}, got.History)
	require.Equal(t, 1, got.PayloadVersion, "message show names the payload's version: 1 as sent")
	got.History, got.PayloadVersion = nil, 0
	require.Equal(t, m, got, "Send returns the message as stored")

	p, err := b.svc.Payload(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, req.Payload, p)
}

func TestSendEmptyAndBinaryPayload(t *testing.T) {
	t.Parallel()

	b := setup(t)
	bin := []byte{0, 1, 2, 0xff, '\n', 0}
	req := eo("")
	req.Payload = bin
	msgs := b.send(t, eo(""), req)

	p, err := b.svc.Payload(b.ctx, msgs[0].ID)
	require.NoError(t, err)
	require.Empty(t, p)
	require.Zero(t, msgs[0].Size)

	p, err = b.svc.Payload(b.ctx, msgs[1].ID)
	require.NoError(t, err)
	require.Equal(t, bin, p, "byte for byte")
}

func TestSendValidatesEveryRequestFirst(t *testing.T) {
	t.Parallel()

	b := setup(t)
	bad := eo("x")
	bad.Sender = "E R P"
	_, err := b.svc.Send(b.ctx, []domain.SendRequest{eo("1"), eoio("ORDERS_DE", "2"), bad, eo("4")})

	var rerr *admin.RequestError
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, 2, rerr.Index, "0-based index of the refused request")
	require.ErrorIs(t, err, domain.ErrInvalid, "the request error keeps its kind")
	require.ErrorContains(t, err, `message 3: sender "E R P"`, "the message counts from 1")

	require.Empty(t, b.messages(t, admin.MessageFilter{}), "nothing is stored")
	require.Empty(t, b.queues(t, admin.QueueFilter{}), "not even a queue record")
}

func TestSendSingleInvalidRequest(t *testing.T) {
	t.Parallel()

	b := setup(t)
	req := eoio("orders_de", "x")
	_, err := b.svc.Send(b.ctx, []domain.SendRequest{req})
	require.ErrorIs(t, err, domain.ErrInvalid)
	var rerr *admin.RequestError
	require.False(t, errors.As(err, &rerr), "a lone request's error needs no position")
	require.ErrorContains(t, err, "lowercase")

	tests := []struct {
		name string
		req  domain.SendRequest
		want string
	}{
		{"no qos", domain.SendRequest{Sender: "ERP"}, "qos is required"},
		{"no sender", domain.SendRequest{QoS: domain.EO}, "sender is required"},
		{"app queue on EO", domain.SendRequest{QoS: domain.EO, Sender: "ERP", AppQueue: "A"}, "EOIO only"},
		{"EOIO without app queue", domain.SendRequest{QoS: domain.EOIO, Sender: "ERP"}, "app queue is required"},
		{"bad header", domain.SendRequest{QoS: domain.EO, Sender: "ERP", Headers: map[string]string{"a b": "c"}}, "header key"},
		{"receiver twice", domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS", "WMS"}}, "named twice"},
	}
	for _, tt := range tests {
		_, err := b.svc.Send(b.ctx, []domain.SendRequest{tt.req})
		require.ErrorIs(t, err, domain.ErrInvalid, tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
	}
	require.Empty(t, b.messages(t, admin.MessageFilter{}))
}

func TestSendPayloadLimit(t *testing.T) {
	t.Parallel()

	b := setupWith(t, setupOpts{maxPayload: 16})
	b.send(t, eo(strings.Repeat("x", 16)))

	_, err := b.svc.Send(b.ctx, []domain.SendRequest{eo("ok"), eo(strings.Repeat("x", 17))})
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.ErrorContains(t, err, "message 2: payload is 17B; the limit (engine.max_payload) is 16B")
	require.Len(t, b.messages(t, admin.MessageFilter{}), 1, "only the first send stored anything")
}

func TestSendBatchesKeepOrder(t *testing.T) {
	t.Parallel()

	b := setup(t)
	const n = 2345
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = eo(fmt.Sprint(i))
		reqs[i].Headers = map[string]string{"N": fmt.Sprint(i)}
	}
	before := b.st.Commits()
	msgs := b.send(t, reqs...)
	require.Equal(t, uint64(3), b.st.Commits()-before, "stored in batches of 1000")

	for i, m := range msgs {
		require.Equal(t, fmt.Sprint(i), m.Headers["N"], "returned in request order")
		require.Equal(t, uint64(i+1), m.Seq, "seq follows request order")
	}
	stored := b.messages(t, admin.MessageFilter{})
	require.Equal(t, ids(msgs), ids(stored), "ids are time-ordered, so id order is request order")
	inQueue := b.queueMessages(t, "XBTI0000", admin.QueueMessagesParams{})
	require.Equal(t, ids(msgs), ids(inQueue))

	q, err := b.svc.Queue(b.ctx, "XBTI0000")
	require.NoError(t, err)
	require.Equal(t, int64(n), q.Depth)
}

func TestSendEOQueueFromTuning(t *testing.T) {
	t.Parallel()

	setParams := func(t *testing.T, b *testBundle, params ...domain.Param) {
		t.Helper()
		require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
			for _, p := range params {
				if err := w.SetParam(p); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	params := []domain.Param{
		{Name: placement.ParamEOInbound, Sub: "SENDER", Value: 3},
		{Name: placement.ParamEOInbound, Sub: "CENTRAL", Value: 8},
		{Name: "EO_OUTBOUND_PARALLEL", Sub: "", Value: 5},
	}
	tests := []struct {
		role  domain.Role
		wantN int
		queue string
	}{
		{domain.RoleSender, 3, "XBTS0002"},
		{domain.RoleCentral, 8, "XBTI0007"},
		{domain.RoleReceiver, 1, "XBTR0000"}, // RECEIVER is not set: one queue
	}
	for _, tt := range tests {
		t.Run(string(tt.role), func(t *testing.T) {
			t.Parallel()

			b := setupWith(t, setupOpts{role: tt.role})
			setParams(t, b, params...)
			m := b.sendOne(t, eo("x"))
			require.Equal(t, []int{tt.wantN}, b.randN, "the slot is drawn from [0, n) for the role's subparameter")
			require.Equal(t, tt.queue, m.Queue)
		})
	}

	t.Run("change applies to later sends", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		first := b.sendOne(t, eo("x"))
		setParams(t, b, domain.Param{Name: placement.ParamEOInbound, Sub: "CENTRAL", Value: 12})
		second := b.sendOne(t, eo("y"))
		require.Equal(t, []int{1, 12}, b.randN)
		require.Equal(t, "XBTI0000", first.Queue)
		require.Equal(t, "XBTI0011", second.Queue)
	})

	t.Run("EOIO draws nothing", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		setParams(t, b, params...)
		b.sendOne(t, eoio("ORDERS_DE", "x"))
		require.Empty(t, b.randN)
	})
}

func TestSendEOIOQueue(t *testing.T) {
	t.Parallel()

	b := setup(t)
	msgs := b.send(t, eoio("ORDERS_DE", "1"), eoio("ORDERS_AT", "2"), eoio("ORDERS_DE", "3"), eoio("A/B_1", "4"))
	require.Equal(t, "XBQIORDERS_DE", msgs[0].Queue)
	require.Equal(t, "XBQIORDERS_AT", msgs[1].Queue)
	require.Equal(t, "XBQIORDERS_DE", msgs[2].Queue)
	require.Equal(t, "XBQIA/B_1", msgs[3].Queue)
	require.Equal(t, []uint64{1, 1, 2, 1}, []uint64{msgs[0].Seq, msgs[1].Seq, msgs[2].Seq, msgs[3].Seq}, "seq counts per queue")
	require.Equal(t, "ORDERS_DE", msgs[0].AppQueue)

	s := setupWith(t, setupOpts{role: domain.RoleSender})
	require.Equal(t, "XBQSORDERS_DE", s.sendOne(t, eoio("ORDERS_DE", "x")).Queue, "the role letter names the inbound queue")
}

func TestSendPrepare(t *testing.T) {
	t.Parallel()

	b := setup(t)
	before := b.sendOne(t, eoio("ORDERS_DE", "0"))
	req := eoio("ORDERS_DE", "1")
	req.Prepare = true
	pend := b.sendOne(t, req)

	require.Equal(t, domain.StatusPEND, pend.Status)
	require.Zero(t, pend.Seq, "a PEND message gets its seq on commit")
	require.Equal(t, "XBQIORDERS_DE", pend.Queue)
	require.Equal(t, uint64(1), before.Seq)

	got, err := b.svc.Message(b.ctx, pend.ID)
	require.NoError(t, err)
	require.Equal(t, []domain.HistoryEntry{{At: b.now, To: domain.StatusPEND, Actor: "local:test", Reason: "prepared (transactional send)"}}, got.History)

	q, err := b.svc.Queue(b.ctx, "XBQIORDERS_DE")
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1, domain.StatusPEND: 1}, q.Counts)
	require.Equal(t, int64(1), q.Depth, "PEND is not yet visible to delivery")
	require.Equal(t, []string{before.ID}, ids(b.queueMessages(t, "XBQIORDERS_DE", admin.QueueMessagesParams{})))
}
