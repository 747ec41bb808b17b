package local_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// blockedFixture is an EOIO queue whose head went NDLV after its retries,
// with three messages HOLD behind it.
type blockedFixture struct {
	*testBundle
	queue string
	head  *domain.Message
	held  []*domain.Message
}

func setupBlocked(t *testing.T) *blockedFixture {
	t.Helper()
	f := &blockedFixture{testBundle: setup(t)}
	first := f.sendOne(t, eoio("ORDERS", "1"))
	f.queue = first.Queue
	f.head = f.ndlv(t, first.ID, domain.ErrorTransient, "HTTP 503 (no attempts left after 4)")
	f.held = f.send(t, eoio("ORDERS", "2"), eoio("ORDERS", "3"), eoio("ORDERS", "4"))
	for _, m := range f.held {
		require.Equal(t, domain.StatusHOLD, m.Status)
	}
	f.requireState(t, domain.QueueBlocked, f.head.ID)
	return f
}

// requireState checks the queue's state and head as `queue list` shows them.
func (f *blockedFixture) requireState(t *testing.T, state domain.QueueState, head string) {
	t.Helper()
	q, err := f.svc.Queue(f.ctx, f.queue)
	require.NoError(t, err)
	require.Equal(t, state, q.State)
	require.NotNil(t, q.Head)
	require.Equal(t, head, q.Head.ID)
}

// open returns the queue's open messages in seq order as "id status".
func (f *blockedFixture) open(t *testing.T) []string {
	t.Helper()
	var out []string
	var last uint64
	for _, m := range f.queueMessages(t, f.queue, admin.QueueMessagesParams{}) {
		require.Greater(t, m.Seq, last, "seq order")
		last = m.Seq
		out = append(out, m.ID+" "+string(m.Status))
	}
	return out
}

func line(m *domain.Message, s domain.Status) string { return m.ID + " " + string(s) }

func TestActFailEOIOHeadReleasesHeld(t *testing.T) {
	t.Parallel()

	f := setupBlocked(t)
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{f.head.ID}})
	require.Equal(t, 1, res.Changed)

	require.Equal(t, []string{line(f.held[0], domain.StatusTBDL), line(f.held[1], domain.StatusTBDL), line(f.held[2], domain.StatusTBDL)},
		f.open(t), "the queue goes on in order (§4)")
	f.requireState(t, domain.QueueActive, f.held[0].ID)
	for _, m := range f.held {
		last := f.message(t, m.ID).History
		require.Equal(t, "HOLD>TBDL", string(last[len(last)-1].From)+">"+string(last[len(last)-1].To))
		require.Equal(t, "local:test", last[len(last)-1].Actor)
	}
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActFailHeldMessageKeepsQueueBlocked(t *testing.T) {
	t.Parallel()

	f := setupBlocked(t)
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: []string{f.held[1].ID}})
	require.Equal(t, 1, res.Changed)

	require.Equal(t, []string{line(f.head, domain.StatusNDLV), line(f.held[0], domain.StatusHOLD), line(f.held[2], domain.StatusHOLD)},
		f.open(t), "the failed message left; the rest still waits behind the head")
	require.Equal(t, domain.StatusFAIL, f.status(t, f.held[1].ID))
	f.requireState(t, domain.QueueBlocked, f.head.ID)
	require.Equal(t, f.recount(t), f.counters(t))
}

// TestActFailHeadAndHeldTogether fails a blocked queue's head and the
// messages behind it in one call, as `message fail --all --queue Q` does:
// every one of them ends FAIL, and none is released for delivery on the way.
func TestActFailHeadAndHeldTogether(t *testing.T) {
	t.Parallel()

	f := setupBlocked(t)
	targets := []string{f.head.ID, f.held[0].ID, f.held[1].ID, f.held[2].ID}
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: targets})
	require.Equal(t, targets, res.ChangedIDs)
	require.Empty(t, res.Skipped)
	for _, id := range targets {
		m := f.message(t, id)
		require.Equal(t, domain.StatusFAIL, m.Status)
		require.Zero(t, countTo(m.History, domain.StatusTBDL)-countTo(m.History[:1], domain.StatusTBDL),
			"%s was never released for delivery", id)
	}
	require.Empty(t, f.open(t))
}

func TestActResendEOIOHeadReleasesHeld(t *testing.T) {
	t.Parallel()

	f := setupBlocked(t)
	res := f.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{f.head.ID}})
	require.Equal(t, 1, res.Changed)

	require.Equal(t, []string{line(f.head, domain.StatusTBDL), line(f.held[0], domain.StatusTBDL),
		line(f.held[1], domain.StatusTBDL), line(f.held[2], domain.StatusTBDL)}, f.open(t))
	f.requireState(t, domain.QueueActive, f.head.ID)
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActResendWaitingHeadReleasesHeld(t *testing.T) {
	t.Parallel()

	f := setup(t)
	first := f.sendOne(t, eoio("ORDERS", "1"))
	f.wait(t, first.ID)
	held := f.sendOne(t, eoio("ORDERS", "2"))
	require.Equal(t, domain.StatusHOLD, held.Status)

	res := f.act(t, admin.ActParams{Action: admin.ActResend, Targets: []string{first.ID}})
	require.Equal(t, 1, res.Changed)
	require.Equal(t, domain.StatusTBDL, f.status(t, first.ID))
	require.Equal(t, domain.StatusTBDL, f.status(t, held.ID))
}

func TestActCommitTakesTheNextSeq(t *testing.T) {
	t.Parallel()

	f := setup(t)
	p1, p2 := eoio("TX", "p1"), eoio("TX", "p2")
	p1.Prepare, p2.Prepare = true, true
	prepared := f.send(t, p1, p2)
	for _, m := range prepared {
		require.Zero(t, m.Seq, "a PEND message has no seq yet")
	}
	sent := f.sendOne(t, eoio("TX", "m1"))
	require.Equal(t, uint64(1), sent.Seq)

	// Commit order, not prepare order, decides the queue order (§9).
	res := f.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{prepared[1].ID, prepared[0].ID}})
	require.Equal(t, 2, res.Changed)
	second, first := f.message(t, prepared[1].ID), f.message(t, prepared[0].ID)
	require.Equal(t, uint64(2), second.Seq)
	require.Equal(t, uint64(3), first.Seq)
	require.Equal(t, []string{sent.ID, second.ID, first.ID}, ids(f.queueMessages(t, sent.Queue, admin.QueueMessagesParams{})))
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActCommitIntoBlockedQueueArrivesHeld(t *testing.T) {
	t.Parallel()

	f := setupBlocked(t)
	req := eoio("ORDERS", "late")
	req.Prepare = true
	p := f.sendOne(t, req)
	require.Equal(t, domain.StatusPEND, p.Status)

	res := f.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{p.ID}})
	require.Equal(t, 1, res.Changed)
	m := f.message(t, p.ID)
	require.Equal(t, domain.StatusHOLD, m.Status, "it waits behind the blocked head like any later message")
	require.Equal(t, f.held[2].Seq+1, m.Seq)
	f.requireState(t, domain.QueueBlocked, f.head.ID)
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActRollbackDeletes(t *testing.T) {
	t.Parallel()

	f := setup(t)
	p1, p2 := eoio("TX", "p1"), eoio("TX", "p2")
	p1.Prepare, p2.Prepare = true, true
	prepared := f.send(t, p1, p2)

	res := f.act(t, admin.ActParams{Action: admin.ActRollback, Targets: []string{prepared[0].ID}})
	require.Equal(t, []string{prepared[0].ID}, res.ChangedIDs)

	_, err := f.svc.Message(f.ctx, prepared[0].ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	q, err := f.svc.Queue(f.ctx, prepared[0].Queue)
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int64{domain.StatusPEND: 1}, q.Counts)
	require.Equal(t, f.recount(t), f.counters(t))

	entries := f.auditLog(t)
	require.Len(t, entries, 1, "the audit log keeps the rolled back message")
	require.Equal(t, string(admin.ActRollback), entries[0].Action)
	require.Equal(t, []string{prepared[0].ID}, entries[0].Targets)
	require.Equal(t, domain.AuditOK, entries[0].Result)

	// Gone, it is not found by a second rollback.
	res = f.act(t, admin.ActParams{Action: admin.ActRollback, Targets: []string{prepared[0].ID}})
	require.Equal(t, []string{prepared[0].ID}, res.NotFound)
}

// bigBlocked is an EOIO queue whose head is NDLV with more HOLD messages
// behind it than one batch holds.
func bigBlocked(t *testing.T) (*blockedFixture, []string) {
	t.Helper()
	f := &blockedFixture{testBundle: setup(t)}
	first := f.sendOne(t, eoio("ORDERS", "1"))
	f.queue = first.Queue
	f.head = f.ndlv(t, first.ID, domain.ErrorPermanent, "HTTP 422")
	reqs := make([]domain.SendRequest, 1500)
	for i := range reqs {
		reqs[i] = eoio("ORDERS", fmt.Sprint(i+2))
	}
	f.held = f.send(t, reqs...)
	ids := []string{f.head.ID}
	for _, m := range f.held {
		ids = append(ids, m.ID)
	}
	return f, ids
}

// TestActFailHeadWithMoreHeldThanABatch: one call fails a blocked head and
// 1,500 messages held behind it, head first, in two batches; the HOLD rule
// is restored once, at the end, so none is released for delivery half way.
func TestActFailHeadWithMoreHeldThanABatch(t *testing.T) {
	t.Parallel()

	f, ids := bigBlocked(t)
	res := f.act(t, admin.ActParams{Action: admin.ActFail, Targets: ids})
	require.Equal(t, len(ids), res.Changed)
	require.Empty(t, res.Skipped)
	require.Empty(t, f.open(t))
	for _, id := range []string{ids[1], ids[1000], ids[len(ids)-1]} {
		require.Zero(t, countTo(f.message(t, id).History, domain.StatusTBDL), "%s was never TBDL", id)
	}
	require.Len(t, f.auditLog(t), 2, "an audit entry per batch")
	require.Equal(t, f.recount(t), f.counters(t))
}

// TestActSelectionIsOneAction: a selection (--all) over the same queue is
// one action too, bounded by its Last target.
func TestActSelectionIsOneAction(t *testing.T) {
	t.Parallel()

	f, ids := bigBlocked(t)
	last := ids[len(ids)-2] // the newest message was not counted
	sel := &admin.Selection{Messages: &admin.MessageFilter{Queues: []string{f.queue},
		Statuses: []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}}, Last: last}
	dry := f.act(t, admin.ActParams{Action: admin.ActFail, Select: sel, DryRun: true, CountOnly: true})
	require.Equal(t, len(ids)-1, dry.Changed)
	require.Empty(t, dry.ChangedIDs, "CountOnly: a count, no ids")
	require.Len(t, f.open(t), len(ids), "a dry run changes nothing")

	res := f.act(t, admin.ActParams{Action: admin.ActFail, Select: sel})
	require.Equal(t, len(ids)-1, res.Changed)
	require.Equal(t, ids[:len(ids)-1], res.ChangedIDs)
	// The one left out was HOLD behind a head now FAIL: the rule, restored
	// at the end, lets it go on.
	require.Equal(t, []string{ids[len(ids)-1] + " TBDL"}, f.open(t))
	require.Equal(t, f.recount(t), f.counters(t))
}

func TestActSelectionRefusals(t *testing.T) {
	t.Parallel()

	b := setup(t)
	for _, p := range []admin.ActParams{
		{Action: admin.ActFail, Select: &admin.Selection{Queues: &admin.QueueFilter{}}},
		{Action: admin.ActStop, Select: &admin.Selection{Messages: &admin.MessageFilter{}}},
		{Action: admin.ActStop, Select: &admin.Selection{Queues: &admin.QueueFilter{}}, Targets: []string{"XBTI0000"}},
		{Action: admin.ActStop, Select: &admin.Selection{Queues: &admin.QueueFilter{Name: "XBQ["}}},
	} {
		_, err := b.svc.Act(b.ctx, p)
		require.ErrorIs(t, err, domain.ErrInvalid, "%+v", p)
		require.ErrorContains(t, err, "nothing was changed")
	}
	require.Len(t, b.auditLog(t), 4, "every refusal is audited")
}
