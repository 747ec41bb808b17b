package admintest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// outbound stores an outbound message for receiver in queue, as routing
// would, so that queues with a receiver exist.
func (b *bundle) outbound(t *testing.T, parent *domain.Message, receiver, queue string) *domain.Message {
	t.Helper()
	m := &domain.Message{
		ID: domain.NewID(), QoS: parent.QoS, Sender: parent.Sender, Receiver: receiver, AppQueue: parent.AppQueue,
		Queue: queue, Stage: domain.Outbound, Status: domain.StatusTBDL, ParentID: parent.ID,
	}
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		return w.Insert(m, []byte("out"), domain.HistoryEntry{Actor: "engine", Reason: "routed"})
	}))
	return m
}

// queueFixture builds queues in every state:
//
//	XBQIBLOCKED  EOIO, head NDLV (transient), one HOLD behind it
//	XBQIDONE     EOIO, everything DLVD: EMPTY
//	XBQIWAITING  EOIO, head WAIT
//	XBTI0000     EO, two TBDL: ACTIVE
//	XBTO2107     EO outbound to WMS, one TBDL, STOPPED
type queueFixture struct {
	head, held, waiting *domain.Message
}

func (b *bundle) queueFixture(t *testing.T) *queueFixture {
	t.Helper()
	f := &queueFixture{}
	msgs := b.send(t, eo("a"), eo("b"), eoio("BLOCKED", "1"), eoio("DONE", "1"), eoio("WAITING", "1"))
	f.head = b.ndlv(t, msgs[2].ID, domain.ErrorTransient, "HTTP 503: retries exhausted")
	f.held = b.sendOne(t, eoio("BLOCKED", "2"))
	require.Equal(t, domain.StatusHOLD, f.held.Status)
	b.deliver(t, msgs[3].ID)
	f.waiting = b.wait(t, msgs[4].ID)
	b.outbound(t, msgs[0], "WMS", "XBTO2107")
	res := b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBTO2107"}})
	require.Equal(t, 1, res.Changed)
	return f
}

func testQueues(t *testing.T, b *bundle) {
	f := b.queueFixture(t)
	qs := b.queues(t, admin.QueueFilter{})
	require.Equal(t, []string{"XBQIBLOCKED", "XBQIDONE", "XBQIWAITING", "XBTI0000", "XBTO2107"}, names(qs))

	byName := map[string]*domain.Queue{}
	for _, q := range qs {
		byName[q.Name] = q
	}
	blocked := byName["XBQIBLOCKED"]
	require.Equal(t, domain.QueueBlocked, blocked.State)
	require.Equal(t, domain.EOIO, blocked.QoS)
	require.Equal(t, domain.Inbound, blocked.Stage)
	require.Equal(t, int64(2), blocked.Depth)
	require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusHOLD: 1}, blocked.Counts)
	require.NotNil(t, blocked.Head)
	require.Equal(t, f.head.ID, blocked.Head.ID)
	require.Equal(t, domain.StatusNDLV, blocked.Head.Status)
	require.Equal(t, "HTTP 503: retries exhausted", blocked.Head.Error)
	require.NotNil(t, blocked.BlockedSince)
	require.NotNil(t, blocked.OldestAt)

	done := byName["XBQIDONE"]
	require.Equal(t, domain.QueueEmpty, done.State)
	require.Zero(t, done.Depth)
	require.Nil(t, done.Head)
	require.Nil(t, done.OldestAt)
	require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1}, done.Counts)

	require.Equal(t, domain.QueueWaiting, byName["XBQIWAITING"].State)
	require.Equal(t, f.waiting.ID, byName["XBQIWAITING"].Head.ID)
	require.Equal(t, domain.QueueActive, byName["XBTI0000"].State)
	require.Equal(t, int64(2), byName["XBTI0000"].Depth)

	out := byName["XBTO2107"]
	require.Equal(t, domain.QueueStopped, out.State)
	require.True(t, out.Stopped)
	require.Equal(t, domain.Outbound, out.Stage)
	require.Equal(t, "WMS", out.Receiver)
}

func testQueuesFilters(t *testing.T, b *bundle) {
	b.queueFixture(t)
	for name, c := range map[string]struct {
		f    admin.QueueFilter
		want []string
	}{
		"all":             {admin.QueueFilter{}, []string{"XBQIBLOCKED", "XBQIDONE", "XBQIWAITING", "XBTI0000", "XBTO2107"}},
		"qos EO":          {admin.QueueFilter{QoS: []domain.QoS{domain.EO}}, []string{"XBTI0000", "XBTO2107"}},
		"qos both":        {admin.QueueFilter{QoS: []domain.QoS{domain.EO, domain.EOIO}}, []string{"XBQIBLOCKED", "XBQIDONE", "XBQIWAITING", "XBTI0000", "XBTO2107"}},
		"stage outbound":  {admin.QueueFilter{Stages: []domain.Stage{domain.Outbound}}, []string{"XBTO2107"}},
		"state BLOCKED":   {admin.QueueFilter{States: []domain.QueueState{domain.QueueBlocked}}, []string{"XBQIBLOCKED"}},
		"states":          {admin.QueueFilter{States: []domain.QueueState{domain.QueueEmpty, domain.QueueStopped}}, []string{"XBQIDONE", "XBTO2107"}},
		"receiver":        {admin.QueueFilter{Receivers: []string{"WMS"}}, []string{"XBTO2107"}},
		"receiver none":   {admin.QueueFilter{Receivers: []string{"ARCHIVE"}}, nil},
		"name pattern":    {admin.QueueFilter{Name: "XBQI*"}, []string{"XBQIBLOCKED", "XBQIDONE", "XBQIWAITING"}},
		"name class":      {admin.QueueFilter{Name: "XBQI[DW]*"}, []string{"XBQIDONE", "XBQIWAITING"}},
		"name exact":      {admin.QueueFilter{Name: "XBTI0000"}, []string{"XBTI0000"}},
		"after":           {admin.QueueFilter{After: "XBQIWAITING"}, []string{"XBTI0000", "XBTO2107"}},
		"limit":           {admin.QueueFilter{Limit: 2}, []string{"XBQIBLOCKED", "XBQIDONE"}},
		"after and limit": {admin.QueueFilter{After: "XBQIBLOCKED", Limit: 1}, []string{"XBQIDONE"}},
		"combined":        {admin.QueueFilter{QoS: []domain.QoS{domain.EOIO}, States: []domain.QueueState{domain.QueueWaiting, domain.QueueActive}}, []string{"XBQIWAITING"}},
	} {
		require.Equal(t, c.want, nilIfEmpty(names(b.queues(t, c.f))), name)
	}

	err := b.svc.Queues(b.ctx, admin.QueueFilter{Name: "XBQ["}, func(*domain.Queue) error { return nil })
	require.ErrorIs(t, err, domain.ErrInvalid)
}

func testQueuesPaging(t *testing.T, b *bundle) {
	// More queues than one page of the HTTP API holds.
	const n = 1234
	reqs := make([]domain.SendRequest, n)
	want := make([]string, n)
	for i := range reqs {
		aq := fmt.Sprintf("Q%05d", i)
		reqs[i] = eoio(aq, "x")
		want[i] = "XBQI" + aq
	}
	b.send(t, reqs...)

	require.Equal(t, want, names(b.queues(t, admin.QueueFilter{})))
	require.Equal(t, want[:1001], names(b.queues(t, admin.QueueFilter{Limit: 1001})))
	require.Equal(t, want[1000:], names(b.queues(t, admin.QueueFilter{After: want[999]})))
	require.Equal(t, want[5:1205], names(b.queues(t, admin.QueueFilter{After: want[4], Limit: 1200})))
	require.Equal(t, want[100:], names(b.queues(t, admin.QueueFilter{Name: "XBQIQ0[01]*", After: want[99]})))
	require.Equal(t, want[:1000], names(b.queues(t, admin.QueueFilter{Name: "XBQIQ00*"})))
}

func testQueue(t *testing.T, b *bundle) {
	f := b.queueFixture(t)
	q, err := b.svc.Queue(b.ctx, "XBQIBLOCKED")
	require.NoError(t, err)
	require.Equal(t, "XBQIBLOCKED", q.Name)
	require.Equal(t, domain.QueueBlocked, q.State)
	require.Equal(t, f.head.ID, q.Head.ID)

	// One queue and the list agree.
	for _, l := range b.queues(t, admin.QueueFilter{}) {
		one, err := b.svc.Queue(b.ctx, l.Name)
		require.NoError(t, err)
		require.Equal(t, l.State, one.State, l.Name)
		require.Equal(t, l.Counts, one.Counts, l.Name)
		require.Equal(t, l.Depth, one.Depth, l.Name)
	}

	q, err = b.svc.Queue(b.ctx, "XBQINOPE")
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.Nil(t, q)
}

func testQueueWithSlash(t *testing.T, b *bundle) {
	// EOIO app queues may hold '/': the queue name does too.
	m := b.send(t, eoio("SAP/ORDERS", "1"), eoio("SAP/ORDERS", "2"))
	require.Equal(t, "XBQISAP/ORDERS", m[0].Queue)

	q, err := b.svc.Queue(b.ctx, "XBQISAP/ORDERS")
	require.NoError(t, err)
	require.Equal(t, int64(2), q.Depth)
	require.Equal(t, ids(m), ids(b.queueMessages(t, "XBQISAP/ORDERS", admin.QueueMessagesParams{})))
	require.Equal(t, []string{"XBQISAP/ORDERS"}, names(b.queues(t, admin.QueueFilter{Name: "XBQISAP*"})))

	res := b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{"XBQISAP/ORDERS"}})
	require.Equal(t, []string{"XBQISAP/ORDERS"}, res.ChangedIDs)

	// Empty and trailing path segments are part of the name too.
	odd := b.sendOne(t, eoio("/A//B/", "3"))
	require.Equal(t, "XBQI/A//B/", odd.Queue)
	q, err = b.svc.Queue(b.ctx, odd.Queue)
	require.NoError(t, err)
	require.Equal(t, odd.Queue, q.Name)
	require.Equal(t, []string{odd.ID}, ids(b.queueMessages(t, odd.Queue, admin.QueueMessagesParams{})))
	res = b.act(t, admin.ActParams{Action: admin.ActStop, Targets: []string{odd.Queue}})
	require.Equal(t, []string{odd.Queue}, res.ChangedIDs)
}

func testQueueMessages(t *testing.T, b *bundle) {
	f := b.queueFixture(t)
	open := b.queueMessages(t, "XBQIBLOCKED", admin.QueueMessagesParams{})
	require.Equal(t, []string{f.head.ID, f.held.ID}, ids(open))
	require.Equal(t, []uint64{1, 2}, seqs(open))

	// Only open messages unless All.
	require.Empty(t, b.queueMessages(t, "XBQIDONE", admin.QueueMessagesParams{}))
	all := b.queueMessages(t, "XBQIDONE", admin.QueueMessagesParams{All: true})
	require.Len(t, all, 1)
	require.Equal(t, domain.StatusDLVD, all[0].Status)

	require.Equal(t, []string{f.held.ID}, ids(b.queueMessages(t, "XBQIBLOCKED", admin.QueueMessagesParams{AfterSeq: 1})))
	require.Equal(t, []string{f.head.ID}, ids(b.queueMessages(t, "XBQIBLOCKED", admin.QueueMessagesParams{Limit: 1})))

	err := b.svc.QueueMessages(b.ctx, "XBQINOPE", admin.QueueMessagesParams{}, func(*domain.Message) error { return nil })
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func testQueueMessagesPaging(t *testing.T, b *bundle) {
	const n = 1500
	reqs := make([]domain.SendRequest, n)
	for i := range reqs {
		reqs[i] = eoio("BIG", fmt.Sprint(i))
	}
	sent := b.send(t, reqs...)
	// Deliver a few at the head: they drop out of the open view.
	for _, m := range sent[:3] {
		b.deliver(t, m.ID)
	}

	open := b.queueMessages(t, "XBQIBIG", admin.QueueMessagesParams{})
	require.Equal(t, ids(sent[3:]), ids(open))
	all := b.queueMessages(t, "XBQIBIG", admin.QueueMessagesParams{All: true})
	require.Equal(t, ids(sent), ids(all))
	for i, m := range all {
		require.Equal(t, uint64(i+1), m.Seq)
	}
	require.Equal(t, ids(sent[:1200]), ids(b.queueMessages(t, "XBQIBIG", admin.QueueMessagesParams{All: true, Limit: 1200})))
	require.Equal(t, ids(sent[1100:]), ids(b.queueMessages(t, "XBQIBIG", admin.QueueMessagesParams{AfterSeq: 1100})))
	require.Equal(t, ids(sent[3:1003]), ids(b.queueMessages(t, "XBQIBIG", admin.QueueMessagesParams{Limit: 1000})))
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
