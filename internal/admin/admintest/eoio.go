package admintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func (b *bundle) eoioStatus(t *testing.T) *admin.EOIOStatus {
	t.Helper()
	st, err := b.svc.EOIOStatus(b.ctx)
	require.NoError(t, err)
	return st
}

func (b *bundle) eoioSwitch(t *testing.T, queues string) *admin.EOIOStatus {
	t.Helper()
	st, err := b.svc.EOIOSwitch(b.ctx, admin.EOIOSwitchParams{Queues: queues})
	require.NoError(t, err)
	return st
}

func group(names ...string) admin.QueueGroup {
	return admin.QueueGroup{Queues: len(names), Names: append([]string{}, names...)}
}

// testEOIOSwitch: a switch to shared queues and back (§10), with the states
// of eoio status and the refusals while the old set drains.
func testEOIOSwitch(t *testing.T, b *bundle) {
	st := b.eoioStatus(t)
	require.Equal(t, &admin.EOIOStatus{State: admin.EOIOInactive, Current: domain.EOIOSet{Prefix: domain.PrefixXBQ},
		Draining: group(), ErrorQueues: group()}, st)

	old := b.send(t, eoio("A", "a1"), eoio("A", "a2"), eoio("B", "b1"))
	require.Equal(t, "XBQIA", old[0].Queue)

	st = b.eoioSwitch(t, "4")
	require.Equal(t, admin.EOIOStarted, st.State, "the old queues still hold messages")
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}, st.Current)
	require.Equal(t, &domain.EOIOSet{Prefix: domain.PrefixXBQ}, st.Old)
	require.NotNil(t, st.SwitchedAt)
	require.NotEmpty(t, st.SwitchedBy)
	draining := group("XBQIA", "XBQIB")
	draining.Messages = 3
	require.Equal(t, draining, st.Draining)

	newer := b.sendOne(t, eoio("A", "a3"))
	require.Equal(t, "XB2IEOIO03", newer.Queue, "CRC-32 of A modulo 4 is 3")

	_, err := b.svc.EOIOSwitch(b.ctx, admin.EOIOSwitchParams{Queues: "0"})
	require.ErrorIs(t, err, domain.ErrConflict)
	require.ErrorContains(t, err, "the last switch is still under way: 2 queues of the old set XBQ still hold 3 messages (XBQIA, XBQIB)")
	require.Contains(t, domain.HintOf(err), "queuectl eoio status")

	for _, m := range old {
		b.deliver(t, m.ID)
	}
	st = b.eoioStatus(t)
	require.Equal(t, admin.EOIOActive, st.State, "drained")
	require.Equal(t, group(), st.Draining)

	_, err = b.svc.EOIOSwitch(b.ctx, admin.EOIOSwitchParams{Queues: "4"})
	require.ErrorIs(t, err, domain.ErrConflict)
	require.EqualError(t, err, "EOIO uses XB2, 4 queues per stage already; nothing was changed")

	// Switching back works the same way: a new set, with the other prefix.
	st = b.eoioSwitch(t, "0")
	require.Equal(t, admin.EOIOStarted, st.State)
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXBQ}, st.Current)
	require.Equal(t, &domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}, st.Old)
	require.Equal(t, []string{"XB2IEOIO03"}, st.Draining.Names)
	require.Equal(t, "XBQIA", b.sendOne(t, eoio("A", "a4")).Queue)
	b.deliver(t, newer.ID)
	require.Equal(t, admin.EOIOInactive, b.eoioStatus(t).State)

	var results []string
	for _, e := range b.auditLog(t, admin.AuditFilter{Action: "eoio.switch", OldestFirst: true}) {
		results = append(results, e.Result+" "+e.Targets[0])
	}
	require.Equal(t, []string{"ok queues=4", "conflict queues=0", "conflict queues=4", "ok queues=0"}, results)
}

func testEOIOSwitchInvalid(t *testing.T, b *bundle) {
	for _, v := range []string{"100", "-1", "many", "", "4.5", "00", " 2", "+3", "03"} {
		st, err := b.svc.EOIOSwitch(b.ctx, admin.EOIOSwitchParams{Queues: v})
		require.ErrorIs(t, err, domain.ErrInvalid, v)
		requireWords(t, err, `--queues "`+v+`" must be a whole number from 0 to 99; nothing was changed`)
		require.Contains(t, domain.HintOf(err), "0 gives each app queue its own queue again")
		require.Nil(t, st)
	}
	require.Equal(t, admin.EOIOInactive, b.eoioStatus(t).State)
	log := b.auditLog(t, admin.AuditFilter{Action: "eoio.switch"})
	require.Len(t, log, 9)
	for _, e := range log {
		require.Equal(t, domain.AuditError, e.Result)
	}
}

// testEOIOErrorQueues: an error queue is a queue like any other — listed,
// blocked, acted on — and the status counts it.
func testEOIOErrorQueues(t *testing.T, b *bundle) {
	b.eoioSwitch(t, "4")
	msgs := b.send(t, eoio("A", "a1"), eoio("C", "c1"), eoio("A", "a2"), eoio("A", "a3"))
	shared := msgs[0].Queue
	require.Equal(t, shared, msgs[1].Queue, "A and C share a queue")
	// The engine's part: the head fails, and its app queue follows it.
	b.ndlv(t, msgs[0].ID, domain.ErrorPermanent, "no receiver")
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		m, err := w.Message(msgs[0].ID)
		if err != nil {
			return err
		}
		_, err = store.Divert(w, m, domain.HistoryEntry{Actor: "engine", Node: "node-a"})
		return err
	}))

	blocked := b.queues(t, admin.QueueFilter{States: []domain.QueueState{domain.QueueBlocked}})
	require.Equal(t, []string{"XBQEA"}, names(blocked))
	q := blocked[0]
	require.Equal(t, domain.EOIO, q.QoS)
	require.Equal(t, domain.Inbound, q.Stage)
	require.Equal(t, msgs[0].ID, q.Head.ID)
	require.Equal(t, int64(2), *q.Behind)
	require.Equal(t, []string{msgs[0].ID, msgs[2].ID, msgs[3].ID}, ids(b.queueMessages(t, "XBQEA", admin.QueueMessagesParams{})))
	shown, err := b.svc.Queue(b.ctx, shared)
	require.NoError(t, err)
	require.Equal(t, domain.QueueActive, shown.State, "the shared queue goes on")
	require.Equal(t, int64(1), shown.Depth)

	st := b.eoioStatus(t)
	errorQueues := group("XBQEA")
	errorQueues.Messages = 3
	require.Equal(t, errorQueues, st.ErrorQueues)

	// Arrivals join the error queue while it holds messages.
	later := b.sendOne(t, eoio("A", "a4"))
	require.Equal(t, "XBQEA", later.Queue)
	require.Equal(t, domain.StatusHOLD, later.Status)

	// Failing the head lets the app queue go on, in order.
	res := b.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{msgs[0].ID}})
	require.Equal(t, 1, res.Changed)
	for _, m := range []*domain.Message{msgs[2], msgs[3], later} {
		require.Equal(t, domain.StatusTBDL, b.status(t, m.ID))
	}
	q, err = b.svc.Queue(b.ctx, "XBQEA")
	require.NoError(t, err)
	require.Equal(t, domain.QueueActive, q.State)
}

// testEOIOCommitAfterSwitch: a message prepared before a switch and
// committed after it takes its place after those sent meanwhile (§9: EOIO
// order is commit order).
func testEOIOCommitAfterSwitch(t *testing.T, b *bundle) {
	prepared := eoio("A", "prepared")
	prepared.Prepare = true
	pend := b.sendOne(t, prepared)
	require.Equal(t, "XBQIA", pend.Queue)
	b.eoioSwitch(t, "4")
	meanwhile := b.sendOne(t, eoio("A", "meanwhile"))
	res := b.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{pend.ID}})
	require.Equal(t, 1, res.Changed)
	committed, err := b.svc.Message(b.ctx, pend.ID)
	require.NoError(t, err)
	require.Equal(t, meanwhile.Queue, committed.Queue)
	require.Equal(t, domain.StatusTBDL, committed.Status)
	require.Equal(t, []string{meanwhile.ID, pend.ID}, ids(b.queueMessages(t, meanwhile.Queue, admin.QueueMessagesParams{})))
	require.Equal(t, admin.EOIOActive, b.eoioStatus(t).State, "the old queue holds nothing now")
}
