// Package admintest is the conformance suite of admin.Service: the
// behaviours the CLI and the TUI rely on, run against every implementation
// (the local service on a store, and the remote client talking to a server
// over HTTP), so that a command behaves the same in embedded and in remote
// mode.
package admintest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// MaxPayload is the engine.max_payload the services under test must be
// configured with (the local service and, for a remote client, the server).
const MaxPayload = 64 << 10

// NewService returns a new service under test on a new, empty store, and
// that store: the suite moves messages through the store into the statuses
// only the delivery engine reaches (DLNG, DLVD, WAIT, NDLV, blacklisted);
// everything it then checks goes through the service. For a remote client
// the store is that of the server it talks to. The service must be
// configured with MaxPayload and Receivers, and NewService arranges for it
// to be closed.
type NewService func(t *testing.T) (admin.Service, store.Store)

// Receivers are the configured receivers the services under test must know
// (engine's receivers: in the configuration): tuning checks subparameters
// against them.
var Receivers = []string{"WMS", "ARCHIVE"}

// Run runs the suite.
func Run(t *testing.T, newService NewService) {
	t.Helper()
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"SendOne", testSendOne},
		{"SendBinaryPayload", testSendBinaryPayload},
		{"SendBatch", testSendBatch},
		{"SendInvalid", testSendInvalid},
		{"SendInvalidInBatch", testSendInvalidInBatch},
		{"SendTooLarge", testSendTooLarge},
		{"SendPrepare", testSendPrepare},
		{"SendKeyRepeat", testSendKeyRepeat},
		{"SendKeyConflict", testSendKeyConflict},
		{"SendKeyInBatch", testSendKeyInBatch},
		{"SendKeyInvalid", testSendKeyInvalid},
		{"SendKeyConcurrent", testSendKeyConcurrent},
		{"Queues", testQueues},
		{"QueuesFilters", testQueuesFilters},
		{"QueuesPaging", testQueuesPaging},
		{"Queue", testQueue},
		{"QueueWithSlash", testQueueWithSlash},
		{"QueueMessages", testQueueMessages},
		{"QueueMessagesPaging", testQueueMessagesPaging},
		{"MessagesFilters", testMessagesFilters},
		{"MessagesTimeFilters", testMessagesTimeFilters},
		{"MessagesPaging", testMessagesPaging},
		{"MessagesStop", testMessagesStop},
		{"Message", testMessage},
		{"Payload", testPayload},
		{"ActResendFail", testActResendFail},
		{"EditPayload", testEditPayload},
		{"EditPayloadResend", testEditPayloadResend},
		{"EditPayloadRefused", testEditPayloadRefused},
		{"ActBlacklist", testActBlacklist},
		{"ActResendBlacklisted", testActResendBlacklisted},
		{"ActTx", testActTx},
		{"TxStuck", testTxStuck},
		{"ActQueues", testActQueues},
		{"ActQueueDelete", testActQueueDelete},
		{"ActDryRun", testActDryRun},
		{"ActRefused", testActRefused},
		{"ActMany", testActMany},
		{"ActSelection", testActSelection},
		{"Nodes", testNodes},
		{"WhoAmI", testWhoAmI},
		{"Tuning", testTuning},
		{"TuneInvalid", testTuneInvalid},
		{"TuneStoredReceiver", testTuneStoredReceiver},
		{"TuneKeywordCase", testTuneKeywordCase},
		{"TuneUnsetNotSet", testTuneUnsetNotSet},
		{"Audit", testAudit},
		{"AuditPaging", testAuditPaging},
		{"Purge", testPurge},
		{"PurgeQueues", testPurgeQueues},
		{"Names", testNames},
		{"EOIOSwitch", testEOIOSwitch},
		{"EOIOSwitchInvalid", testEOIOSwitchInvalid},
		{"EOIOErrorQueues", testEOIOErrorQueues},
		{"EOIOCommitAfterSwitch", testEOIOCommitAfterSwitch},
		{"ErrorKinds", testErrorKinds},
		{"Canceled", testCanceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, setup(t, newService))
		})
	}
}

// bundle is what one test works with.
type bundle struct {
	ctx context.Context
	svc admin.Service
	st  store.Store
}

func setup(t *testing.T, newService NewService) *bundle {
	t.Helper()
	svc, st := newService(t)
	return &bundle{ctx: context.Background(), svc: svc, st: st}
}

// eo returns a valid EO send request from ERP to WMS.
func eo(payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Interface: "OrderCreate",
		Payload: []byte(payload)}
}

// eoio returns a valid EOIO send request of appQueue from SHOP to WMS.
func eoio(appQueue, payload string) domain.SendRequest {
	return domain.SendRequest{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"}, AppQueue: appQueue,
		Payload: []byte(payload)}
}

func (b *bundle) send(t *testing.T, reqs ...domain.SendRequest) []*domain.Message {
	t.Helper()
	sent, err := b.svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	require.Len(t, sent, len(reqs))
	msgs := make([]*domain.Message, len(sent))
	for i, m := range sent {
		require.False(t, m.Duplicate, "a new message")
		msgs[i] = m.Message
	}
	return msgs
}

func (b *bundle) sendOne(t *testing.T, req domain.SendRequest) *domain.Message {
	t.Helper()
	return b.send(t, req)[0]
}

// move changes a message's status in the store, as the engine would.
func (b *bundle) move(t *testing.T, id string, from, to domain.Status, update func(m *domain.Message)) *domain.Message {
	t.Helper()
	var m *domain.Message
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		var err error
		m, err = w.Transition(store.TransitionParams{
			ID: id, From: []domain.Status{from}, To: to, Update: update,
			History: domain.HistoryEntry{Actor: "engine", Node: "node-a", Reason: "admintest"},
		})
		return err
	}))
	return m
}

// deliver takes a TBDL message through DLNG to DLVD.
func (b *bundle) deliver(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusDLVD, func(m *domain.Message) { m.Attempts = 1 })
}

// wait takes a TBDL message through DLNG to WAIT after a transient error.
func (b *bundle) wait(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusWAIT, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, "HTTP 503 Service Unavailable", domain.ErrorTransient
		next := time.Now().Add(5 * time.Minute).UTC()
		m.NextAttemptAt = &next
	})
}

// ndlv takes a TBDL message through DLNG to NDLV with the given error.
func (b *bundle) ndlv(t *testing.T, id string, class domain.ErrorClass, text string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, text, class
	})
}

// crash takes a TBDL message to NDLV as crash blacklisting does.
func (b *bundle) crash(t *testing.T, id string) *domain.Message {
	t.Helper()
	b.move(t, id, domain.StatusTBDL, domain.StatusDLNG, nil)
	return b.move(t, id, domain.StatusDLNG, domain.StatusNDLV, func(m *domain.Message) {
		m.Attempts, m.Crashes, m.Blacklisted, m.Node = 2, 2, true, "node-a"
		m.Error, m.ErrorClass = "blacklisted: the engine process died 2 times while delivering it", domain.ErrorCrash
	})
}

// status returns a message's status as the service reports it, or "" when
// the message does not exist.
func (b *bundle) status(t *testing.T, id string) domain.Status {
	t.Helper()
	m, err := b.svc.Message(b.ctx, id)
	if err != nil {
		require.ErrorIs(t, err, domain.ErrNotFound)
		return ""
	}
	return m.Status
}

// messages lists the messages matching f.
func (b *bundle) messages(t *testing.T, f admin.MessageFilter) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.svc.Messages(b.ctx, f, func(m *domain.Message) error {
		out = append(out, m)
		return nil
	}))
	return out
}

// queues lists the queues matching f.
func (b *bundle) queues(t *testing.T, f admin.QueueFilter) []*domain.Queue {
	t.Helper()
	var out []*domain.Queue
	require.NoError(t, b.svc.Queues(b.ctx, f, func(q *domain.Queue) error {
		out = append(out, q)
		return nil
	}))
	return out
}

// queueMessages lists a queue's messages.
func (b *bundle) queueMessages(t *testing.T, name string, p admin.QueueMessagesParams) []*domain.Message {
	t.Helper()
	var out []*domain.Message
	require.NoError(t, b.svc.QueueMessages(b.ctx, name, p, func(m *domain.Message) error {
		out = append(out, m)
		return nil
	}))
	return out
}

// auditLog lists the audit entries matching f.
func (b *bundle) auditLog(t *testing.T, f admin.AuditFilter) []*domain.AuditEntry {
	t.Helper()
	var out []*domain.AuditEntry
	require.NoError(t, b.svc.Audit(b.ctx, f, func(e *domain.AuditEntry) error {
		out = append(out, e)
		return nil
	}))
	return out
}

func (b *bundle) act(t *testing.T, p admin.ActParams) *admin.BulkResult {
	t.Helper()
	res, err := b.svc.Act(b.ctx, p)
	require.NoError(t, err)
	return res
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

func seqs(msgs []*domain.Message) []uint64 {
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Seq
	}
	return out
}

// unknownID is a well-formed message id that no store holds.
const unknownID = "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"

func ptr[T any](v T) *T { return &v }

// requireWords checks the message of an error in both front ends' words:
// cli as the CLI says it (a field named by its flag, --queues), and the
// same with the field's API name (queues) as the API and the service say
// it.
func requireWords(t *testing.T, err error, cli string, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.Equal(t, cli, domain.RenderFields(err, domain.Flag), msgAndArgs...)
	api := strings.NewReplacer("--queues ", "queues ", "--sub ", "sub ").Replace(cli)
	require.Equal(t, api, err.Error(), msgAndArgs...)
}
