package admintest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func testSendOne(t *testing.T, b *bundle) {
	req := eo("order 1\n")
	req.Headers = map[string]string{"X-Env": "prod", "Trace-Id": "abc"}
	m := b.sendOne(t, req)

	require.NoError(t, domain.ValidID(m.ID))
	require.Equal(t, domain.EO, m.QoS)
	require.Equal(t, "ERP", m.Sender)
	require.Equal(t, []string{"WMS"}, m.Receivers)
	require.Equal(t, "OrderCreate", m.Interface)
	require.Equal(t, "XBTI0000", m.Queue)
	require.Equal(t, domain.Inbound, m.Stage)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Equal(t, uint64(1), m.Seq)
	require.Equal(t, int64(len("order 1\n")), m.Size)
	require.Equal(t, req.Headers, m.Headers)
	require.False(t, m.CreatedAt.IsZero())

	// What Send returned is what the store holds.
	got, err := b.svc.Message(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, m.ID, got.ID)
	require.Equal(t, m.Queue, got.Queue)
	require.Equal(t, m.Headers, got.Headers)
	require.True(t, m.CreatedAt.Equal(got.CreatedAt))

	// EOIO goes to the app queue's inbound queue.
	o := b.sendOne(t, eoio("ORDERS_DE", "x"))
	require.Equal(t, "XBQIORDERS_DE", o.Queue)
	require.Equal(t, "ORDERS_DE", o.AppQueue)
	require.Equal(t, domain.EOIO, o.QoS)
}

func testSendBinaryPayload(t *testing.T, b *bundle) {
	all := make([]byte, 0, 3*256)
	for i := range 3 * 256 {
		all = append(all, byte(i*7+i/256))
	}
	cases := map[string][]byte{
		"every byte":   all,
		"empty":        {},
		"invalid utf8": {0xff, 0xfe, 0x00, 0xc3, 0x28},
		"nul only":     {0},
		"crlf":         []byte("a\r\nb\r\n"),
		"at the limit": bytes.Repeat([]byte{0xa5}, MaxPayload),
	}
	for name, payload := range cases {
		req := eo("")
		req.Payload = payload
		m := b.sendOne(t, req)
		require.Equal(t, int64(len(payload)), m.Size, name)
		got, err := b.svc.Payload(b.ctx, m.ID)
		require.NoError(t, err, name)
		require.Len(t, got, len(payload), name)
		if len(payload) > 0 {
			require.Equal(t, payload, got, name)
		}
	}
}

func testSendBatch(t *testing.T, b *bundle) {
	// More than one batch of the remote client and of the local store.
	const n = 1203
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		if i%3 == 0 {
			reqs[i] = eoio(fmt.Sprintf("AQ%d", i%4), fmt.Sprintf("message %d", i))
		} else {
			reqs[i] = eo(fmt.Sprintf("message %d", i))
		}
		reqs[i].Headers = map[string]string{"N": fmt.Sprint(i)}
	}
	msgs := b.send(t, reqs...)

	seen := map[string]bool{}
	for i, m := range msgs {
		require.Equal(t, fmt.Sprint(i), m.Headers["N"], "messages come back in request order")
		require.Equal(t, reqs[i].QoS, m.QoS)
		require.Equal(t, reqs[i].AppQueue, m.AppQueue)
		require.False(t, seen[m.ID], "ids are unique")
		seen[m.ID] = true
	}
	// Ids are time-ordered: listing by id gives request order.
	require.Equal(t, ids(msgs), ids(b.messages(t, admin.MessageFilter{})))

	p, err := b.svc.Payload(b.ctx, msgs[n-1].ID)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("message %d", n-1), string(p))

	// EOIO order within an app queue is request order.
	q := b.queueMessages(t, "XBQIAQ1", admin.QueueMessagesParams{})
	require.NotEmpty(t, q)
	for i := 1; i < len(q); i++ {
		require.Less(t, q[i-1].ID, q[i].ID)
		require.Equal(t, q[i-1].Seq+1, q[i].Seq)
	}
}

func testSendInvalid(t *testing.T, b *bundle) {
	lower := eoio("orders", "x")
	for name, req := range map[string]domain.SendRequest{
		"no qos":          {Sender: "ERP", Payload: []byte("x")},
		"bad qos":         {QoS: "XX", Sender: "ERP"},
		"no sender":       {QoS: domain.EO},
		"bad sender":      {QoS: domain.EO, Sender: "E R P"},
		"bad receiver":    {QoS: domain.EO, Sender: "ERP", Receivers: []string{"W/MS"}},
		"twice receiver":  {QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS", "WMS"}},
		"EO app queue":    {QoS: domain.EO, Sender: "ERP", AppQueue: "ORDERS"},
		"EOIO no queue":   {QoS: domain.EOIO, Sender: "ERP"},
		"lower app queue": lower,
		"bad header":      {QoS: domain.EO, Sender: "ERP", Headers: map[string]string{"a b": "c"}},
	} {
		msgs, err := b.svc.Send(b.ctx, []domain.SendRequest{req})
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		require.Empty(t, msgs, name)
		// A single request is refused without a position.
		var rerr *admin.RequestError
		require.False(t, errors.As(err, &rerr), "%s: %v", name, err)
	}
	require.Empty(t, b.messages(t, admin.MessageFilter{}))

	_, err := b.svc.Send(b.ctx, []domain.SendRequest{lower})
	require.ErrorContains(t, err, `app queue "orders" contains lowercase 'o'`)
}

func testSendInvalidInBatch(t *testing.T, b *bundle) {
	// The bad request sits in the second batch of a remote client: nothing
	// of the first batch may be stored either, and its position is its
	// index in the whole request list.
	for _, bad := range []int{0, 2, 700, 1099} {
		reqs := make([]domain.SendRequest, 1100)
		for i := range reqs {
			reqs[i] = eo("x")
		}
		reqs[bad].Sender = "not a name"
		msgs, err := b.svc.Send(b.ctx, reqs)
		require.ErrorIs(t, err, domain.ErrInvalid)
		require.Empty(t, msgs)
		var rerr *admin.RequestError
		require.ErrorAs(t, err, &rerr)
		require.Equal(t, bad, rerr.Index)
		require.ErrorIs(t, rerr.Err, domain.ErrInvalid)
		require.Equal(t, `sender "not a name" contains ' '; allowed are A-Z a-z 0-9 _ - .`, rerr.Err.Error())
		require.Equal(t, fmt.Sprintf(`message %d: sender "not a name" contains ' '; allowed are A-Z a-z 0-9 _ - .`, bad+1), err.Error())
	}
	require.Empty(t, b.messages(t, admin.MessageFilter{}))
}

func testSendTooLarge(t *testing.T, b *bundle) {
	big := eo("")
	big.Payload = make([]byte, MaxPayload+1)

	_, err := b.svc.Send(b.ctx, []domain.SendRequest{big})
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.NotErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "engine.max_payload")

	_, err = b.svc.Send(b.ctx, []domain.SendRequest{eo("a"), eo("b"), big, eo("c")})
	require.ErrorIs(t, err, domain.ErrTooLarge)
	var rerr *admin.RequestError
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, 2, rerr.Index)

	require.Empty(t, b.messages(t, admin.MessageFilter{}), "nothing was stored")
}

func testSendPrepare(t *testing.T, b *bundle) {
	req := eoio("TX", "prepared")
	req.Prepare = true
	pend := b.sendOne(t, req)
	require.Equal(t, domain.StatusPEND, pend.Status)
	require.Zero(t, pend.Seq, "a PEND message gets its seq at commit")

	later := b.sendOne(t, eoio("TX", "plain"))
	require.Equal(t, domain.StatusTBDL, later.Status)
	require.Equal(t, uint64(1), later.Seq)

	pends := b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}})
	require.Equal(t, []string{pend.ID}, ids(pends))

	// Commit order is EOIO order.
	res := b.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{pend.ID}})
	require.Equal(t, []string{pend.ID}, res.ChangedIDs)
	m, err := b.svc.Message(b.ctx, pend.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Equal(t, uint64(2), m.Seq)
}
