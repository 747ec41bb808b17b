package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testLiveness holds the cases that keep an engine going: no ready message
// is starved by a limit, and nothing stays DLNG for a node that did not
// die — not after a clean stop, not after a claim whose commit the node
// could not confirm.
func testLiveness(t *testing.T, open Opener) {
	t.Run("DueRetriesBehindABlockedQueueAreNotStarved", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		// Queue A: four WAIT messages due now, and one NDLV by exhausted
		// retries, which blocks it. Queue B: one WAIT message due now.
		a := outbound(5)
		for _, m := range a {
			InQueue(m, domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 2, 0))
		}
		b := InQueue(outbound(1)[0], domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 2, 1))
		e.insert(t, append(a, b)...)
		res := e.claim(t, 10)
		require.Len(t, res.Claimed, 6)
		var outcomes []store.Outcome
		for _, c := range res.Claimed {
			o := store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeRetry, Error: "HTTP 503",
				Class: domain.ErrorTransient}
			if c.Message.ID == a[4].ID {
				o.Kind, o.Error = store.OutcomeFailed, "HTTP 503 (no attempts left)"
			}
			outcomes = append(outcomes, o)
		}
		e.record(t, nil, outcomes...)
		e.waitDue(t)

		got := e.claim(t, 2)
		require.Equal(t, idsOf(b), claimedIDs(got), "the due retry of the queue that may start, past those of the blocked one")
		require.False(t, got.More, "nothing else may start: no reason to claim again at once")
		require.False(t, got.Now.IsZero(), "a claim says the store's time its NextDue is on")
		again := e.claim(t, 2)
		require.Empty(t, again.Claimed)
		require.False(t, again.More, "a blocked queue's due retries make no claim loop spin")
	})

	t.Run("DueRetriesKeepToTheRoomOfTheirQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		eo := outbound(3)
		stopped := InQueue(outbound(1)[0], domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 2, 1))
		e.insert(t, append(eo, stopped)...)
		res := e.claim(t, 10)
		require.Len(t, res.Claimed, 4)
		var outcomes []store.Outcome
		for _, c := range res.Claimed {
			outcomes = append(outcomes, store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeRetry,
				Error: "HTTP 503", Class: domain.ErrorTransient})
		}
		e.record(t, nil, outcomes...)
		e.update(t, func(w store.Writer) error { return w.SetStopped(stopped.Queue, true) })
		e.waitDue(t)

		got := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Window: 2, Candidates: store.CandidatesSkip})
		require.Len(t, got.Claimed, 2, "three due retries of an EO queue with a window of two: two start")
		require.Equal(t, []string{eo[0].Queue, eo[0].Queue}, queuesOf(got), "and none of the stopped queue")
		require.False(t, got.More)
	})

	t.Run("LeaveHandsBackWhatIsLeftDLNG", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := eoioOutbound("ORDERS", 2)
		e.insert(t, msgs...)
		require.Len(t, e.claim(t, 10).Claimed, 1)
		require.NoError(t, e.eng.Leave(e.ctx, e.node))

		m := e.message(t, msgs[0].ID)
		require.Equal(t, domain.StatusTBDL, m.Status, "a clean stop leaves nothing DLNG")
		require.Zero(t, m.Crashes, "and counts no crash")
		require.Zero(t, m.Attempts, "nor the attempt that never started")
		require.Empty(t, m.Node)
		h := e.history(t, m.ID)
		require.Equal(t, domain.StatusTBDL, h[len(h)-1].To)
		require.Contains(t, h[len(h)-1].Reason, "handed back")

		j, err := e.eng.Join(e.ctx, store.JoinParams{ID: "N2", TTL: time.Hour, Heartbeat: testHeartbeat, Receivers: Receivers})
		require.NoError(t, err)
		require.Empty(t, j.Dead, "a node that left is not dead: there is nothing to recover")
		e.node = j.Node
		require.Equal(t, idsOf(msgs[0]), claimedIDs(e.claim(t, 10)), "the next node delivers it, in order")
		requireConsistent(t, e.testBundle)
	})

	t.Run("ReconcileHandsBackAClaimTheNodeNeverSaw", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		known := eoioOutbound("ORDERS", 2)
		lost := eoioOutbound("INVOICES", 1)
		e.insert(t, append(known, lost...)...)
		res := e.claim(t, 10)
		require.Len(t, res.Claimed, 2)
		// The node saw the claim of ORDERS' head only: the reply of the
		// claim that took INVOICES' head was lost, its commit unknown.
		held := claimedOf(t, res, known[0].ID)
		rec, err := e.eng.Reconcile(e.ctx, store.ReconcileParams{Node: e.node, Held: []string{known[0].ID}})
		require.NoError(t, err)
		require.Equal(t, idsOf(lost...), idsOf(rec.HandedBack...))

		m := e.message(t, lost[0].ID)
		require.Equal(t, domain.StatusTBDL, m.Status)
		require.Zero(t, m.Attempts, "the attempt never started")
		require.Zero(t, m.Crashes, "nothing crashed")
		require.Equal(t, domain.StatusDLNG, e.message(t, known[0].ID).Status, "what the node holds stays its")

		out := e.record(t, &store.ClaimParams{Limit: 10}, delivered(held))
		require.Empty(t, out.Conflicts)
		require.ElementsMatch(t, []string{known[1].ID, lost[0].ID}, claimedIDs(out.Claim), "both queues go on")

		again, err := e.eng.Reconcile(e.ctx, store.ReconcileParams{Node: e.node, Held: claimedIDs(out.Claim)})
		require.NoError(t, err)
		require.Empty(t, again.HandedBack, "nothing unknown is left")
		requireConsistent(t, e.testBundle)
	})
}

// waitDue waits until the store's clock is past the time of the outcomes
// just recorded, so that a retry due at once is due.
func (e *engineBundle) waitDue(t *testing.T) {
	t.Helper()
	at, err := e.eng.Now(e.ctx)
	require.NoError(t, err)
	for {
		now, err := e.eng.Now(e.ctx)
		require.NoError(t, err)
		if now.After(at) {
			return
		}
	}
}
