package admintest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// testTxStuck: the check-back's state of a prepared message (§9) is part
// of the message, a stuck filter selects the transactions it gave up on, a
// queue counts them, and an operator's commit of a stuck message works as
// any commit.
func testTxStuck(t *testing.T, b *bundle) {
	var pend []*domain.Message
	for range 3 {
		req := eo("tx")
		req.Prepare = true
		pend = append(pend, b.sendOne(t, req))
	}
	at := time.Date(2026, 3, 10, 12, 0, 5, 0, time.UTC)
	stuck := b.move(t, pend[0].ID, domain.StatusPEND, domain.StatusPEND, func(m *domain.Message) {
		m.Checks, m.LastCheckAt, m.LastAnswer, m.Stuck = 10, &at, "unknown", true
	})
	asked := b.move(t, pend[1].ID, domain.StatusPEND, domain.StatusPEND, func(m *domain.Message) {
		m.Checks, m.LastCheckAt, m.LastAnswer = 2, &at, "timeout"
	})

	yes, no := true, false
	got := b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}, Stuck: &yes})
	require.Len(t, got, 1)
	require.Equal(t, stuck.ID, got[0].ID)
	require.Equal(t, 10, got[0].Checks)
	require.Equal(t, at, *got[0].LastCheckAt)
	require.Equal(t, "unknown", got[0].LastAnswer)
	require.True(t, got[0].Stuck)
	got = b.messages(t, admin.MessageFilter{Statuses: []domain.Status{domain.StatusPEND}, Stuck: &no})
	require.Equal(t, []string{asked.ID, pend[2].ID}, ids(got))
	require.Equal(t, 2, got[0].Checks)
	require.False(t, got[0].Stuck)

	q, err := b.svc.Queue(b.ctx, stuck.Queue)
	require.NoError(t, err)
	require.Equal(t, int64(1), q.Stuck)
	require.Equal(t, int64(3), q.Counts[domain.StatusPEND])

	res := b.act(t, admin.ActParams{Action: admin.ActCommit, Targets: []string{stuck.ID}})
	require.Equal(t, []string{stuck.ID}, res.ChangedIDs)
	m, err := b.svc.Message(b.ctx, stuck.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.False(t, m.Stuck, "a committed message is no longer stuck")
	require.Equal(t, 10, m.Checks, "it keeps its count")
	q, err = b.svc.Queue(b.ctx, stuck.Queue)
	require.NoError(t, err)
	require.Zero(t, q.Stuck)
	require.Empty(t, b.messages(t, admin.MessageFilter{Stuck: &yes}))
}
