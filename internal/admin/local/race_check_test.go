package local_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// crashedHeads sends two EOIO messages to each app queue and leaves the
// first DLNG with one crash, as a process that died delivering it would:
// the engine's crash recovery blacklists it and holds the second.
func (b *raceBundle) crashedHeads(t *testing.T, appQueues ...string) {
	t.Helper()
	var reqs []domain.SendRequest
	for _, q := range appQueues {
		reqs = append(reqs, eoio(q, "poison"), eoio(q, "next"))
	}
	msgs, err := b.svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		for i := 0; i < len(msgs); i += 2 {
			_, err := w.Transition(store.TransitionParams{
				ID: msgs[i].ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG,
				Update: func(m *domain.Message) {
					m.Attempts, m.Crashes, m.Node = 1, 1, "node-0"
				},
				History: domain.HistoryEntry{Node: "node-0", Actor: "engine", Reason: "delivery attempt 1"},
			})
			if err != nil {
				return err
			}
		}
		return nil
	}))
}

// sendMix sends batches of ten messages, EO and EOIO, to one or both receivers.
func (b *raceBundle) sendMix(t *testing.T, batches int) {
	t.Helper()
	require.NoError(t, b.trySendMix(batches))
}

func (b *raceBundle) trySendMix(batches int) error {
	receivers := [][]string{{"WMS"}, {"ARCHIVE"}, {"WMS", "ARCHIVE"}}
	for range batches {
		reqs := make([]domain.SendRequest, 10)
		for i := range reqs {
			reqs[i] = eo("race")
			if rand.IntN(2) == 0 {
				reqs[i] = eoio(fmt.Sprintf("A%d", rand.IntN(4)), "race")
			}
			reqs[i].Receivers = receivers[rand.IntN(len(receivers))]
		}
		if _, err := b.svc.Send(b.ctx, reqs); err != nil {
			return err
		}
		if e := b.eng.Load(); e != nil {
			e.Notify()
		}
	}
	return nil
}

// checkFinal checks every message after the drain: it ended in exactly one
// final status, its history is one unbroken chain with nothing after that
// status, the engine reported nothing about it after a final status, and
// a message an operator failed stayed FAIL. The counters and the status
// index agree with the messages.
func (b *raceBundle) checkFinal(t *testing.T, ops *opLog) {
	t.Helper()
	var msgs []*domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			var err error
			m.History, err = r.History(m.ID)
			msgs = append(msgs, m)
			return err
		})
	}))
	require.NotEmpty(t, msgs)

	b.mu.Lock()
	defer b.mu.Unlock()
	passed := map[domain.Status]bool{}
	byID := map[string]*domain.Message{}
	for _, m := range msgs {
		byID[m.ID] = m
		h := m.History
		require.True(t, m.Status.Final(), "%s ended %s: %v", m.ID, m.Status, steps(h))
		require.Empty(t, h[0].From, "%s: the first entry is its arrival", m.ID)
		finals := 0
		for i, e := range h {
			passed[e.To] = true
			if i > 0 {
				require.Equal(t, h[i-1].To, e.From, "%s: history is a chain: %v", m.ID, steps(h))
			}
			if e.To.Final() {
				finals++
				require.Equal(t, len(h)-1, i, "%s: nothing after %s: %v", m.ID, e.To, steps(h))
			}
			switch e.To {
			case domain.StatusDLVD:
				require.Equal(t, "engine", e.Actor, "%s: only the engine delivers", m.ID)
			case domain.StatusFAIL:
				require.Equal(t, "ops", e.Actor, "%s: only an operator fails", m.ID)
			}
		}
		require.Equal(t, 1, finals, "%s: exactly one final status: %v", m.ID, steps(h))
		require.Equal(t, m.Status, h[len(h)-1].To)

		seen := b.seen[m.ID]
		for i, s := range seen {
			if s.Final() {
				require.Equal(t, len(seen)-1, i, "%s: an engine event after %s: %v", m.ID, s, seen)
				require.Equal(t, m.Status, s, "%s: the engine reported %s", m.ID, s)
			}
		}
	}
	for id := range ops.failed {
		require.Contains(t, byID, id)
		require.Equal(t, domain.StatusFAIL, byID[id].Status, "%s was failed by an operator: %v", id, steps(byID[id].History))
	}
	for _, s := range []domain.Status{domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT, domain.StatusHOLD,
		domain.StatusNDLV, domain.StatusDLVD, domain.StatusFAIL} {
		require.True(t, passed[s], "the race took messages through %s", s)
	}

	walked := countsByWalk(t, b.st)
	require.Equal(t, walked, countsKept(t, b.st), "the per-queue counters match a recount")
	byStatus := map[domain.Status]int64{}
	for _, m := range byID {
		byStatus[m.Status]++
	}
	for _, s := range domain.Statuses {
		require.Equal(t, byStatus[s], int64(len(b.inStatus(t, s))), "the status index agrees for %s", s)
	}
}

// steps returns a history as "FROM>TO by ACTOR" steps.
func steps(h []domain.HistoryEntry) []string {
	out := make([]string, len(h))
	for i, e := range h {
		out[i] = fmt.Sprintf("%s>%s by %s", e.From, e.To, e.Actor)
	}
	return out
}
