package admintest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// keyed returns an EO send request with an idempotency key.
func keyed(key, payload string) domain.SendRequest {
	r := eo(payload)
	r.Key = key
	return r
}

func testSendKeyRepeat(t *testing.T, b *bundle) {
	first := b.sendOne(t, keyed("order-4711", "<order/>"))
	require.Equal(t, "order-4711", first.Key)

	// The repeat of a producer that timed out: the same message again,
	// headers and interface the producer's to vary.
	again := keyed("order-4711", "<order/>")
	again.Interface, again.Headers = "OrderCreateRetry", map[string]string{"Attempt": "2"}
	sent, err := b.svc.Send(b.ctx, []domain.SendRequest{again})
	require.NoError(t, err)
	require.Len(t, sent, 1)
	require.True(t, sent[0].Duplicate, "a repeat is marked")
	require.Equal(t, first.ID, sent[0].ID, "the id of the message sent first")
	require.Equal(t, first.Status, sent[0].Status)
	require.Equal(t, "OrderCreate", sent[0].Interface, "the message as it was stored")

	// The answer tells the message's status as it is now.
	b.deliver(t, first.ID)
	sent, err = b.svc.Send(b.ctx, []domain.SendRequest{keyed("order-4711", "<order/>")})
	require.NoError(t, err)
	require.True(t, sent[0].Duplicate)
	require.Equal(t, domain.StatusDLVD, sent[0].Status)

	require.Equal(t, []string{first.ID}, ids(b.messages(t, admin.MessageFilter{})), "one message")
	m, err := b.svc.Message(b.ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, "order-4711", m.Key, "message show shows the key")

	// A key is unique per sender: another sender's is its own.
	other := keyed("order-4711", "<order/>")
	other.Sender = "SHOP"
	shop := b.sendOne(t, other)
	require.NotEqual(t, first.ID, shop.ID)
	require.Equal(t, ids([]*domain.Message{first, shop}), ids(b.messages(t, admin.MessageFilter{Key: "order-4711"})),
		"message list --key lists the key's messages of every sender")
	require.Empty(t, b.messages(t, admin.MessageFilter{Key: "order-4712"}))
	require.Equal(t, []string{shop.ID},
		ids(b.messages(t, admin.MessageFilter{Key: "order-4711", Senders: []string{"SHOP"}})))
}

func testSendKeyConflict(t *testing.T, b *bundle) {
	first := b.sendOne(t, keyed("k1", "<order/>"))
	for name, c := range map[string]struct {
		change func(r *domain.SendRequest)
		diff   string
	}{
		"payload size":  {func(r *domain.SendRequest) { r.Payload = []byte("<order id='2'/>") }, "payload (8 bytes then, 15 now)"},
		"payload bytes": {func(r *domain.SendRequest) { r.Payload = []byte("<ORDER/>") }, "payload (other bytes, 8 both times)"},
		"receivers": {func(r *domain.SendRequest) { r.Receivers = []string{"WMS", "ARCHIVE"} },
			"receivers (WMS then, ARCHIVE WMS now)"},
		"no receivers": {func(r *domain.SendRequest) { r.Receivers = nil }, "receivers (WMS then, none now)"},
		"qos and app queue": {func(r *domain.SendRequest) { r.QoS, r.AppQueue = domain.EOIO, "ORDERS" },
			"qos (EO then, EOIO now) and app queue (none then, ORDERS now)"},
		"three": {func(r *domain.SendRequest) { r.Payload, r.QoS, r.AppQueue = nil, domain.EOIO, "ORDERS" },
			"payload (8 bytes then, 0 now), qos (EO then, EOIO now) and app queue (none then, ORDERS now)"},
	} {
		r := keyed("k1", "<order/>")
		c.change(&r)
		sent, err := b.svc.Send(b.ctx, []domain.SendRequest{r})
		require.ErrorIs(t, err, domain.ErrConflict, name)
		require.Empty(t, sent, name)
		require.EqualError(t, err, fmt.Sprintf("key %q of sender ERP is message %s's, which differs in %s", "k1", first.ID, c.diff), name)
		require.Equal(t, "a retry sends the message again as it was first sent; a new message needs a new key",
			domain.HintOf(err), name)
		var rerr *admin.RequestError
		require.False(t, errors.As(err, &rerr), "a single request is refused without a position")
	}
	require.Equal(t, []string{first.ID}, ids(b.messages(t, admin.MessageFilter{})), "nothing stored")

	// A refused send is audited (§6), naming the key's message.
	refused := b.auditLog(t, admin.AuditFilter{Action: "send", Result: domain.AuditConflict})
	require.NotEmpty(t, refused)
	require.Equal(t, []string{first.ID}, refused[0].Targets)
	require.Contains(t, refused[0].Detail, "which differs in")
}

func testSendKeyInBatch(t *testing.T, b *bundle) {
	first := b.sendOne(t, keyed("stored", "a"))

	// Keys repeated in one batch, and one stored before: each repeat
	// answers with its key's message.
	sent, err := b.svc.Send(b.ctx, []domain.SendRequest{
		keyed("new", "b"), eo("plain"), keyed("stored", "a"), keyed("new", "b"), eo("plain"),
	})
	require.NoError(t, err)
	require.Len(t, sent, 5)
	require.False(t, sent[0].Duplicate)
	require.False(t, sent[1].Duplicate)
	require.True(t, sent[2].Duplicate)
	require.Equal(t, first.ID, sent[2].ID)
	require.True(t, sent[3].Duplicate)
	require.Equal(t, sent[0].ID, sent[3].ID, "a repeat within the batch")
	require.False(t, sent[4].Duplicate, "no key, no repeat")
	require.NotEqual(t, sent[1].ID, sent[4].ID)
	require.Len(t, b.messages(t, admin.MessageFilter{}), 4)

	// A conflict in a batch stores none of it and names its position.
	before := b.messages(t, admin.MessageFilter{})
	_, err = b.svc.Send(b.ctx, []domain.SendRequest{keyed("fresh", "x"), eo("y"), keyed("fresh", "other")})
	require.ErrorIs(t, err, domain.ErrConflict)
	var rerr *admin.RequestError
	require.ErrorAs(t, err, &rerr)
	require.Equal(t, 2, rerr.Index)
	require.True(t, strings.HasPrefix(err.Error(), `message 3: key "fresh" of sender ERP is message `), err.Error())
	require.Contains(t, err.Error(), "which differs in payload (1 bytes then, 5 now)")
	require.Equal(t, ids(before), ids(b.messages(t, admin.MessageFilter{})), "nothing of the batch stored")
}

func testSendKeyInvalid(t *testing.T, b *bundle) {
	for name, c := range map[string]struct {
		key, want string
	}{
		"too long": {strings.Repeat("k", domain.MaxKey+1), "is 129 characters long; a key is 1-128 printable characters"},
		"newline":  {"order\n4711", `key "order\n4711" contains the control character U+000A at byte 5`},
		"tab":      {"order\t4711", `key "order\t4711" contains the control character U+0009 at byte 5`},
	} {
		sent, err := b.svc.Send(b.ctx, []domain.SendRequest{keyed(c.key, "x")})
		require.ErrorIs(t, err, domain.ErrInvalid, name)
		require.ErrorContains(t, err, c.want, name)
		require.Empty(t, sent, name)

		err = b.svc.Messages(b.ctx, admin.MessageFilter{Key: c.key}, func(*domain.Message) error { return nil })
		require.ErrorIs(t, err, domain.ErrInvalid, "message list --key: %s", name)
	}
	require.Empty(t, b.messages(t, admin.MessageFilter{}))
}

func testSendKeyConcurrent(t *testing.T, b *bundle) {
	// Producers retrying at once, half of them with another payload: one
	// message is stored; a racer that sent it again gets it, one that
	// sent another message a conflict, whichever came first.
	const racers = 8
	payload := func(i int) string { return []string{"first", "other"}[i%2] }
	// Spread over inbound queues, the racers' transactions share no queue
	// row to wait on: only the key keeps them apart.
	_, err := b.svc.Tune(b.ctx, set(eoInbound, "CENTRAL", "64"))
	require.NoError(t, err)
	sent := make([][]admin.Sent, racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			sent[i], errs[i] = b.svc.Send(b.ctx, []domain.SendRequest{keyed("race", payload(i))})
		})
	}
	close(start)
	wg.Wait()

	stored := b.messages(t, admin.MessageFilter{})
	require.Len(t, stored, 1, "one message")
	p, err := b.svc.Payload(b.ctx, stored[0].ID)
	require.NoError(t, err)
	fresh := 0
	for i := range racers {
		if payload(i) != string(p) {
			require.ErrorIs(t, errs[i], domain.ErrConflict, "racer %d", i)
			continue
		}
		require.NoError(t, errs[i], "racer %d", i)
		require.Equal(t, stored[0].ID, sent[i][0].ID, "racer %d", i)
		if !sent[i][0].Duplicate {
			fresh++
		}
	}
	require.Equal(t, 1, fresh, "one send stored it; the others found it")
}
