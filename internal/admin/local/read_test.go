package local_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// queueFixture is a store with a queue in every state.
type queueFixture struct {
	*testBundle
	active, blocked, waiting, stopped, empty, permanent string
	activeHead, blockedHead, waitingHead, permanentNext *domain.Message
	createdActive, createdBlocked                       time.Time
}

func setupQueues(t *testing.T) *queueFixture {
	t.Helper()
	f := &queueFixture{testBundle: setup(t),
		active: "XBTI0000", blocked: "XBQIORDERS_DE", waiting: "XBQIORDERS_AT",
		stopped: "XBQIORDERS_CH", empty: "XBQIDONE", permanent: domain.EOOutboundQueue(domain.Code4("WMS"), 1, 0),
	}
	start := f.now

	// ACTIVE: two TBDL messages.
	f.createdActive = f.now
	msgs := f.send(t, eo("1"), eo("2"))
	f.activeHead = msgs[0]

	// BLOCKED: an EOIO head NDLV after retries, two behind it.
	f.now = start.Add(time.Minute)
	f.createdBlocked = f.now
	msgs = f.send(t, eoio("ORDERS_DE", "1"), eoio("ORDERS_DE", "2"), eoio("ORDERS_DE", "3"))
	f.now = start.Add(2 * time.Minute)
	f.blockedHead = f.ndlv(t, msgs[0].ID, domain.ErrorTransient, "connection refused")

	// WAITING: the head waits for its next attempt.
	msgs = f.send(t, eoio("ORDERS_AT", "1"), eoio("ORDERS_AT", "2"))
	f.move(t, msgs[0].ID, domain.StatusTBDL, domain.StatusDLNG, nil)
	f.waitingHead = f.move(t, msgs[0].ID, domain.StatusDLNG, domain.StatusWAIT, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, "HTTP 503", domain.ErrorTransient
		next := f.now.Add(5 * time.Minute)
		m.NextAttemptAt = &next
	})

	// STOPPED: stopped by an operator, with a message in it.
	f.send(t, eoio("ORDERS_CH", "1"))
	require.NoError(t, f.st.Update(f.ctx, func(w store.Writer) error { return w.SetStopped(f.stopped, true) }))

	// EMPTY: everything delivered or failed.
	msgs = f.send(t, eoio("DONE", "1"), eoio("DONE", "2"))
	f.deliver(t, msgs[0].ID)
	f.move(t, msgs[1].ID, domain.StatusTBDL, domain.StatusFAIL, nil)

	// An EO outbound queue whose head went NDLV by a permanent error: it no
	// longer holds the queue up (§4), so the next message is the head.
	parent := f.activeHead
	first := f.outbound(t, parent, "WMS")
	f.permanentNext = f.outbound(t, parent, "WMS")
	f.ndlv(t, first.ID, domain.ErrorPermanent, "HTTP 400")
	return f
}

func TestQueuesStates(t *testing.T) {
	t.Parallel()

	f := setupQueues(t)
	qs := f.queues(t, admin.QueueFilter{})
	require.Equal(t, []string{f.empty, f.waiting, f.stopped, f.blocked, f.active, f.permanent}, names(qs), "in name order")
	byName := map[string]*domain.Queue{}
	for _, q := range qs {
		byName[q.Name] = q
	}

	q := byName[f.active]
	require.Equal(t, domain.QueueActive, q.State)
	require.Equal(t, domain.EO, q.QoS)
	require.Equal(t, domain.Inbound, q.Stage)
	require.Equal(t, int64(2), q.Depth)
	require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 2}, q.Counts)
	require.Equal(t, &domain.QueueHead{ID: f.activeHead.ID, Status: domain.StatusTBDL, Since: f.createdActive}, q.Head)
	require.Equal(t, &f.createdActive, q.OldestAt)
	require.Nil(t, q.BlockedSince)
	require.False(t, q.Stopped)

	q = byName[f.blocked]
	require.Equal(t, domain.QueueBlocked, q.State)
	require.Equal(t, domain.EOIO, q.QoS)
	require.Equal(t, int64(3), q.Depth)
	require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusTBDL: 2}, q.Counts)
	require.Equal(t, &domain.QueueHead{
		ID: f.blockedHead.ID, Status: domain.StatusNDLV, Error: "connection refused", ErrorClass: domain.ErrorTransient,
		Since: f.blockedHead.UpdatedAt, Attempts: 1,
	}, q.Head)
	require.NotNil(t, q.BlockedSince)
	require.Equal(t, f.blockedHead.UpdatedAt, *q.BlockedSince, "blocked since the head went NDLV")
	require.Equal(t, &f.createdBlocked, q.OldestAt)

	q = byName[f.waiting]
	require.Equal(t, domain.QueueWaiting, q.State)
	require.Equal(t, domain.StatusWAIT, q.Head.Status)
	require.Equal(t, "HTTP 503", q.Head.Error)
	require.Nil(t, q.BlockedSince)

	q = byName[f.stopped]
	require.Equal(t, domain.QueueStopped, q.State)
	require.True(t, q.Stopped)
	require.Equal(t, int64(1), q.Depth, "a stopped queue keeps its messages")

	q = byName[f.empty]
	require.Equal(t, domain.QueueEmpty, q.State)
	require.Zero(t, q.Depth)
	require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1, domain.StatusFAIL: 1}, q.Counts)
	require.Nil(t, q.Head)
	require.Nil(t, q.OldestAt, "no open message, no age")

	q = byName[f.permanent]
	require.Equal(t, domain.QueueActive, q.State, "a permanent error on an EO queue does not block it")
	require.Equal(t, domain.Outbound, q.Stage)
	require.Equal(t, "WMS", q.Receiver)
	require.Equal(t, f.permanentNext.ID, q.Head.ID)
	require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusTBDL: 1}, q.Counts)
}

func TestQueueOnlyPermanentNDLVLeft(t *testing.T) {
	t.Parallel()

	b := setup(t)
	m := b.outbound(t, b.sendOne(t, eo("x")), "WMS")
	b.ndlv(t, m.ID, domain.ErrorPermanent, "HTTP 400")

	q, err := b.svc.Queue(b.ctx, m.Queue)
	require.NoError(t, err)
	require.Equal(t, int64(1), q.Depth, "the NDLV message still needs an operator")
	require.NotNil(t, q.Head, "and is shown as the head")
	require.Equal(t, m.ID, q.Head.ID)
	require.Equal(t, domain.StatusNDLV, q.Head.Status)
	require.Equal(t, "HTTP 400", q.Head.Error)
	require.Equal(t, domain.QueueError, q.State, "nothing is left to deliver, nothing blocks, an operator is needed")
	require.Nil(t, q.BlockedSince)
	require.Equal(t, int64(0), *q.Behind, "it holds nothing up")

	errored := b.queues(t, admin.QueueFilter{States: []domain.QueueState{domain.QueueError}})
	require.Equal(t, []string{m.Queue}, names(errored))
	require.Empty(t, b.queues(t, admin.QueueFilter{States: []domain.QueueState{domain.QueueEmpty, domain.QueueBlocked}}))
}

// TestBehindCountsWhatTheHeadHoldsUp: an EO queue whose head is NDLV after
// its retries holds up the TBDL messages behind it, not the messages passed
// over before it.
func TestBehindCountsWhatTheHeadHoldsUp(t *testing.T) {
	t.Parallel()

	b := setup(t)
	var msgs []*domain.Message
	for i := range 5 {
		msgs = append(msgs, b.outbound(t, b.sendOne(t, eo(fmt.Sprint(i))), "WMS"))
	}
	b.ndlv(t, msgs[0].ID, domain.ErrorPermanent, "HTTP 400")
	b.crash(t, msgs[1].ID)
	b.ndlv(t, msgs[2].ID, domain.ErrorTransient, "connection refused")

	q, err := b.svc.Queue(b.ctx, msgs[0].Queue)
	require.NoError(t, err)
	require.Equal(t, domain.QueueBlocked, q.State)
	require.Equal(t, msgs[2].ID, q.Head.ID)
	require.Equal(t, int64(5), q.Depth)
	require.Equal(t, int64(2), *q.Behind, "the two TBDL after the head; not the two passed over")
}

func TestQueuesFilters(t *testing.T) {
	t.Parallel()

	f := setupQueues(t)
	tests := []struct {
		name   string
		filter admin.QueueFilter
		want   []string
	}{
		{"qos", admin.QueueFilter{QoS: []domain.QoS{domain.EO}}, []string{f.active, f.permanent}},
		{"stage", admin.QueueFilter{Stages: []domain.Stage{domain.Outbound}}, []string{f.permanent}},
		{"state", admin.QueueFilter{States: []domain.QueueState{domain.QueueBlocked, domain.QueueWaiting}}, []string{f.waiting, f.blocked}},
		{"receiver", admin.QueueFilter{Receivers: []string{"WMS"}}, []string{f.permanent}},
		{"receiver none", admin.QueueFilter{Receivers: []string{"ARCHIVE"}}, nil},
		{"name pattern", admin.QueueFilter{Name: "XBQIORDERS_*"}, []string{f.waiting, f.stopped, f.blocked}},
		{"name pattern ?", admin.QueueFilter{Name: "XBTI000?"}, []string{f.active}},
		{"name exact", admin.QueueFilter{Name: f.empty}, []string{f.empty}},
		{"combined", admin.QueueFilter{QoS: []domain.QoS{domain.EOIO}, States: []domain.QueueState{domain.QueueActive}}, nil},
		{"after", admin.QueueFilter{After: f.stopped}, []string{f.blocked, f.active, f.permanent}},
		{"limit", admin.QueueFilter{Limit: 2}, []string{f.empty, f.waiting}},
		{"after and limit", admin.QueueFilter{After: f.waiting, Limit: 2}, []string{f.stopped, f.blocked}},
		{"limit counts matches", admin.QueueFilter{QoS: []domain.QoS{domain.EO}, Limit: 1}, []string{f.active}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, nilIfEmpty(names(f.queues(t, tt.filter))), tt.name)
	}
}

func TestQueuesMalformedPattern(t *testing.T) {
	t.Parallel()

	b := setup(t)
	err := b.svc.Queues(b.ctx, admin.QueueFilter{Name: "XBQ["}, func(*domain.Queue) error { return nil })
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `queue name pattern "XBQ["`)
}

func TestQueuesStopsOnCallbackError(t *testing.T) {
	t.Parallel()

	f := setupQueues(t)
	boom := errors.New("boom")
	n := 0
	err := f.svc.Queues(f.ctx, admin.QueueFilter{}, func(*domain.Queue) error {
		n++
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, n)
}

func TestQueueNotFound(t *testing.T) {
	t.Parallel()

	b := setup(t)
	_, err := b.svc.Queue(b.ctx, "XBTI0000")
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.ErrorContains(t, err, "XBTI0000")

	err = b.svc.QueueMessages(b.ctx, "XBTI0000", admin.QueueMessagesParams{}, func(*domain.Message) error { return nil })
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestQueueMessages(t *testing.T) {
	t.Parallel()

	b := setup(t)
	msgs := b.send(t, eoio("ORDERS_DE", "1"), eoio("ORDERS_DE", "2"), eoio("ORDERS_DE", "3"), eoio("ORDERS_DE", "4"))
	b.deliver(t, msgs[0].ID)
	b.ndlv(t, msgs[1].ID, domain.ErrorTransient, "timeout")
	pend := eoio("ORDERS_DE", "5")
	pend.Prepare = true
	b.sendOne(t, pend)
	queue := msgs[0].Queue

	open := b.queueMessages(t, queue, admin.QueueMessagesParams{})
	require.Equal(t, []string{msgs[1].ID, msgs[2].ID, msgs[3].ID}, ids(open), "open messages in seq order, head first")
	require.Equal(t, []uint64{2, 3, 4}, []uint64{open[0].Seq, open[1].Seq, open[2].Seq})

	all := b.queueMessages(t, queue, admin.QueueMessagesParams{All: true})
	require.Equal(t, ids(msgs), ids(all), "--all includes delivered ones; PEND has no seq yet")

	require.Equal(t, []string{msgs[2].ID}, ids(b.queueMessages(t, queue, admin.QueueMessagesParams{AfterSeq: 2, Limit: 1})))
	require.Equal(t, []string{msgs[0].ID, msgs[1].ID}, ids(b.queueMessages(t, queue, admin.QueueMessagesParams{All: true, Limit: 2})))
	require.Empty(t, b.queueMessages(t, queue, admin.QueueMessagesParams{AfterSeq: 4}))
}

func TestMessagesFilters(t *testing.T) {
	t.Parallel()

	b := setup(t)
	start := b.now
	erp := b.sendOne(t, eo("1")) // ERP → WMS, 12:00
	b.now = start.Add(time.Hour)
	shop := b.sendOne(t, eoio("ORDERS_DE", "2")) // SHOP → WMS, 13:00
	b.now = start.Add(2 * time.Hour)
	toArchive := eo("3")
	toArchive.Receivers = []string{"ARCHIVE", "BI"}
	archive := b.sendOne(t, toArchive) // ERP → ARCHIVE, BI, 14:00
	out := b.outbound(t, erp, "WMS")   // outbound ERP → WMS, 14:00
	b.ndlv(t, shop.ID, domain.ErrorTransient, "Connection Refused by WMS")
	b.ndlv(t, out.ID, domain.ErrorCrash, "node died while delivering")

	yes, no := true, false
	tests := []struct {
		name   string
		filter admin.MessageFilter
		want   []*domain.Message
	}{
		{"all", admin.MessageFilter{}, []*domain.Message{erp, shop, archive, out}},
		{"status", admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}}, []*domain.Message{shop, out}},
		{"statuses", admin.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL, domain.StatusNDLV}}, []*domain.Message{erp, shop, archive, out}},
		{"queue", admin.MessageFilter{Queues: []string{"XBTI0000"}}, []*domain.Message{erp, archive}},
		{"queues", admin.MessageFilter{Queues: []string{"XBQIORDERS_DE", out.Queue}}, []*domain.Message{shop, out}},
		{"receiver, inbound and outbound", admin.MessageFilter{Receivers: []string{"WMS"}}, []*domain.Message{erp, shop, out}},
		{"receiver of several", admin.MessageFilter{Receivers: []string{"BI"}}, []*domain.Message{archive}},
		{"sender", admin.MessageFilter{Senders: []string{"SHOP"}}, []*domain.Message{shop}},
		{"app queue", admin.MessageFilter{AppQueues: []string{"ORDERS_DE"}}, []*domain.Message{shop}},
		{"error text, any case", admin.MessageFilter{ErrorText: "connection refused"}, []*domain.Message{shop}},
		{"older than", admin.MessageFilter{OlderThan: start.Add(90 * time.Minute)}, []*domain.Message{erp, shop}},
		{"newer than", admin.MessageFilter{NewerThan: start.Add(30 * time.Minute)}, []*domain.Message{shop, archive, out}},
		{"between", admin.MessageFilter{NewerThan: start.Add(30 * time.Minute), OlderThan: start.Add(90 * time.Minute)}, []*domain.Message{shop}},
		{"blacklisted", admin.MessageFilter{Blacklisted: &yes}, []*domain.Message{out}},
		{"not blacklisted", admin.MessageFilter{Blacklisted: &no, Statuses: []domain.Status{domain.StatusNDLV}}, []*domain.Message{shop}},
		{"after", admin.MessageFilter{After: shop.ID}, []*domain.Message{archive, out}},
		{"limit", admin.MessageFilter{Limit: 2}, []*domain.Message{erp, shop}},
		{"after and limit", admin.MessageFilter{After: erp.ID, Limit: 2}, []*domain.Message{shop, archive}},
		{"status and limit", admin.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}, Limit: 1}, []*domain.Message{erp}},
		{"none", admin.MessageFilter{Senders: []string{"CRM"}}, nil},
	}
	for _, tt := range tests {
		require.Equal(t, ids(tt.want), ids(b.messages(t, tt.filter)), tt.name)
	}

	got := b.messages(t, admin.MessageFilter{Blacklisted: &yes})
	require.Len(t, got, 1)
	require.True(t, got[0].Blacklisted)
	require.Equal(t, domain.ErrorCrash, got[0].ErrorClass)
	require.Nil(t, got[0].History, "lists carry no history")
}

func TestMessagesMalformedCursor(t *testing.T) {
	t.Parallel()

	b := setup(t)
	err := b.svc.Messages(b.ctx, admin.MessageFilter{After: "0193"}, func(*domain.Message) error { return nil })
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `"0193"`)
}

func TestMessagesCancelled(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.send(t, eo("1"), eo("2"), eo("3"))
	ctx, cancel := context.WithCancel(b.ctx)
	n := 0
	err := b.svc.Messages(ctx, admin.MessageFilter{}, func(*domain.Message) error {
		n++
		cancel()
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, n, "the walk stops at the next message")
}

func TestMessageWithHistory(t *testing.T) {
	t.Parallel()

	b := setup(t)
	start := b.now
	m := b.sendOne(t, eoio("ORDERS_DE", "x"))
	b.now = start.Add(time.Minute)
	b.ndlv(t, m.ID, domain.ErrorPermanent, "HTTP 400")

	got, err := b.svc.Message(b.ctx, m.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNDLV, got.Status)
	require.Equal(t, "HTTP 400", got.Error)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, []domain.HistoryEntry{
		{At: start, To: domain.StatusTBDL, Actor: "local:test", Reason: "sent"},
		{At: b.now, From: domain.StatusTBDL, To: domain.StatusDLNG, Actor: "engine", Reason: "test"},
		{At: b.now, From: domain.StatusDLNG, To: domain.StatusNDLV, Actor: "engine", Reason: "test"},
	}, got.History, "every status change, oldest first")
}

func TestMessageAndPayloadLookups(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.sendOne(t, eo("x"))
	unknown := domain.NewID()

	_, err := b.svc.Message(b.ctx, unknown)
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.ErrorContains(t, err, unknown)
	_, err = b.svc.Payload(b.ctx, unknown)
	require.ErrorIs(t, err, domain.ErrNotFound)

	for _, bad := range []string{"", "42", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1fz", "../../etc/passwd"} {
		_, err = b.svc.Message(b.ctx, bad)
		require.ErrorIs(t, err, domain.ErrInvalid, "%q is no id: a usage error, not a miss", bad)
		_, err = b.svc.Payload(b.ctx, bad)
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
	}
}

func TestQueuesNamePatternCrossesSlash(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.send(t, eoio("SAP/ORDERS", "a"), eoio("ORDERS", "b"), eo("c"))

	match := func(pattern string) []string {
		return names(b.queues(t, admin.QueueFilter{Name: pattern}))
	}
	require.Equal(t, []string{"XBQIORDERS", "XBQISAP/ORDERS"}, match("XBQI*"), "* crosses the / of an app queue")
	require.Equal(t, []string{"XBQIORDERS", "XBQISAP/ORDERS"}, match("*ORDERS"))
	require.Equal(t, []string{"XBQISAP/ORDERS"}, match("XBQISAP/*"))
	require.Equal(t, []string{"XBQISAP/ORDERS"}, match("XBQISAP?ORDERS"))
	require.Equal(t, []string{"XBTI0000"}, match("XBT?0000"))
}

func TestMessageIDsInCapitals(t *testing.T) {
	t.Parallel()

	b := setup(t)
	sent := b.send(t, eo("first"), eo("second"))
	upper := strings.ToUpper(sent[0].ID)

	got, err := b.svc.Message(b.ctx, upper)
	require.NoError(t, err, "an id pasted in capitals finds its message")
	require.Equal(t, sent[0].ID, got.ID)
	p, err := b.svc.Payload(b.ctx, upper)
	require.NoError(t, err)
	require.Equal(t, "first", string(p))
	require.Equal(t, []string{sent[1].ID}, ids(b.messages(t, admin.MessageFilter{After: upper})))
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestEOHeadBehindMessagesInFlight: in an EO queue the message that holds
// it up is its head, though messages in flight stand before it; the
// oldest open message is still the first of them.
func TestEOHeadBehindMessagesInFlight(t *testing.T) {
	t.Parallel()

	b := setup(t)
	parent := b.sendOne(t, eo("1"))
	var msgs []*domain.Message
	for range 4 {
		msgs = append(msgs, b.outbound(t, parent, "WMS"))
	}
	queue := msgs[0].Queue
	b.move(t, msgs[0].ID, domain.StatusTBDL, domain.StatusDLNG, nil)
	b.move(t, msgs[1].ID, domain.StatusTBDL, domain.StatusDLNG, nil)
	b.move(t, msgs[1].ID, domain.StatusDLNG, domain.StatusWAIT, func(m *domain.Message) {
		m.Attempts, m.Error, m.ErrorClass = 1, "HTTP 503", domain.ErrorTransient
	})

	q, err := b.svc.Queue(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, domain.QueueWaiting, q.State)
	require.Equal(t, msgs[1].ID, q.Head.ID, "the WAIT behind a DLNG")
	require.Equal(t, msgs[0].CreatedAt, *q.OldestAt)

	b.ndlv(t, msgs[2].ID, domain.ErrorTransient, "connection refused")
	q, err = b.svc.Queue(b.ctx, queue)
	require.NoError(t, err)
	require.Equal(t, domain.QueueBlocked, q.State)
	require.Equal(t, msgs[2].ID, q.Head.ID, "the NDLV behind a DLNG and a WAIT")

	b.move(t, msgs[0].ID, domain.StatusDLNG, domain.StatusDLVD, nil)
	b.move(t, msgs[1].ID, domain.StatusWAIT, domain.StatusDLNG, nil)
	b.move(t, msgs[1].ID, domain.StatusDLNG, domain.StatusDLVD, nil)
	var listed []*domain.Queue
	require.NoError(t, b.svc.Queues(b.ctx, admin.QueueFilter{Name: queue}, func(q *domain.Queue) error {
		listed = append(listed, q)
		return nil
	}))
	require.Len(t, listed, 1)
	require.Equal(t, msgs[2].ID, listed[0].Head.ID, "the NDLV, now the first open message")
	require.Equal(t, domain.QueueBlocked, listed[0].State)
}
