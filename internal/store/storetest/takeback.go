package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testTakeBack: a node that comes back did not die (§4). A recovery counts
// the crashes of an incarnation that looks dead; when that incarnation's
// process joins again — it was paused — its recovery of its old
// incarnation takes every one of them back, in one transaction: a
// candidate is a candidate no more, a blacklisted message returns to TBDL
// at the head of its queue with its HOLD successors after it, and each
// history says so — unless an operator acted on the message since. A
// process that died never joins again: another incarnation of its id joins,
// and the crashes stand.
//
// The stores have one engine here: another incarnation of the same id
// supersedes the first, as a restart does, and recovers it, counting; the
// first one's process then joins again, naming it as Previous.
func testTakeBack(t *testing.T, open Opener) {
	// paused has the incarnation that claimed declared dead and recovered,
	// counting, by a later one; it returns the dead incarnation.
	paused := func(t *testing.T, e *engineBundle) store.Node {
		t.Helper()
		dead := e.node
		e.node = e.join(t, "N1")
		_, err := e.eng.Recover(e.ctx, store.RecoverParams{Node: e.node, Dead: dead, Blacklisting: true, Crashes: 2})
		require.NoError(t, err)
		return dead
	}
	// rejoin has the dead incarnation's process join again and recover it,
	// as the engine does.
	rejoin := func(t *testing.T, e *engineBundle, dead store.Node) *store.RecoverResult {
		t.Helper()
		j, err := e.eng.Join(e.ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Heartbeat: testHeartbeat,
			Receivers: Receivers, Previous: dead})
		require.NoError(t, err)
		e.node = j.Node
		rec, err := e.eng.Recover(e.ctx, store.RecoverParams{Node: e.node, Dead: dead, Blacklisting: true, Crashes: 2,
			Outage: true})
		require.NoError(t, err)
		return rec
	}
	lastReason := func(t *testing.T, e *engineBundle, id string) string {
		t.Helper()
		h := e.history(t, id)
		return h[len(h)-1].Reason
	}

	t.Run("ACandidateIsACandidateNoMore", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(3)
		e.insert(t, msgs...)
		res := e.claim(t, 10)
		require.Len(t, res.Claimed, 3)
		// One was delivered before the pause; the others were in flight.
		e.record(t, nil, delivered(res.Claimed[0]))
		dead := paused(t, e)
		for _, m := range msgs[1:] {
			got := e.message(t, m.ID)
			require.Equal(t, 1, got.Crashes, "the recovery counts: it cannot tell a pause from a death")
			require.Equal(t, domain.StatusTBDL, got.Status)
		}
		// The new owner delivers one candidate before the paused process
		// comes back.
		alone := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone})
		require.Len(t, alone.Claimed, 1)
		e.record(t, nil, delivered(alone.Claimed[0]))

		rec := rejoin(t, e, dead)
		require.ElementsMatch(t, idsOf(msgs[1:]...), idsOf(rec.TakenBack...))
		require.Empty(t, rec.Requeued)
		require.Empty(t, rec.Blacklisted)
		for _, m := range msgs[1:] {
			got := e.message(t, m.ID)
			require.Zero(t, got.Crashes, "message %s keeps no crash", m.ID)
			require.Empty(t, got.ErrorClass)
			require.Empty(t, got.Error)
			require.Equal(t, "crash 1 taken back: node N1 was paused, not dead", lastReason(t, e, m.ID))
		}
		require.Equal(t, domain.StatusDLVD, e.message(t, alone.Claimed[0].Message.ID).Status, "its status stays")
		require.Zero(t, e.message(t, msgs[0].ID).Crashes)
		next := e.claim(t, 10)
		require.Zero(t, next.Candidates, "no candidate is left")
		require.Len(t, next.Claimed, 1, "the last one is claimed with any other")

		again, err := e.eng.Recover(e.ctx, store.RecoverParams{Node: e.node, Dead: dead, Blacklisting: true, Crashes: 2,
			Outage: true})
		require.NoError(t, err)
		require.Empty(t, again.TakenBack, "a crash is taken back once")
		requireConsistent(t, e.testBundle)
	})

	// blacklisted makes an EOIO queue of three whose head, a candidate,
	// is blacklisted by the recovery of the paused incarnation that had
	// it alone in flight; it returns the messages and that incarnation.
	blacklisted := func(t *testing.T, e *engineBundle) ([]*domain.Message, store.Node) {
		t.Helper()
		msgs := eoioOutbound("ORDERS", 3)
		msgs[0].Crashes, msgs[0].ErrorClass, msgs[0].Error = 1, domain.ErrorCrash, "the engine process died while delivering it"
		e.insert(t, msgs...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone})
		require.Len(t, res.Claimed, 1)
		dead := paused(t, e)
		head := e.message(t, msgs[0].ID)
		require.Equal(t, domain.StatusNDLV, head.Status)
		require.True(t, head.Blacklisted)
		require.Equal(t, 2, head.Crashes)
		require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusHOLD: 2}, e.counts(t, msgs[0].Queue))
		return msgs, dead
	}

	t.Run("ABlacklistedMessageReturnsAtTheHeadWithItsSuccessors", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs, dead := blacklisted(t, e)
		rec := rejoin(t, e, dead)
		require.Equal(t, []string{msgs[0].ID}, idsOf(rec.TakenBack...))
		head := e.message(t, msgs[0].ID)
		require.Equal(t, domain.StatusTBDL, head.Status)
		require.False(t, head.Blacklisted)
		require.Equal(t, 1, head.Crashes, "the crash of the process that died before stands")
		require.Equal(t, domain.ErrorCrash, head.ErrorClass, "it is a blacklist candidate still")
		require.Empty(t, head.Node)
		require.Equal(t, "crash 2 taken back: node N1 was paused, not dead; it is no longer blacklisted",
			lastReason(t, e, head.ID))
		require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 3}, e.counts(t, msgs[0].Queue), "its successors follow")
		require.Equal(t, msgs[0].ID, e.headID(t, msgs[0].Queue))

		skip := e.claim(t, 10)
		require.Empty(t, skip.Claimed, "nothing passes the candidate at the head of its EOIO queue")
		require.Equal(t, 1, skip.Candidates)
		alone := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone})
		require.Equal(t, []string{msgs[0].ID}, claimedIDs(alone), "it is delivered first, alone")
		requireConsistent(t, e.testBundle)
	})

	t.Run("AnOperatorsActionSinceStands", func(t *testing.T) {
		t.Parallel()
		for _, act := range []struct {
			name   string
			to     domain.Status
			update func(*domain.Message)
		}{
			{"fail", domain.StatusFAIL, nil},
			{"release", domain.StatusTBDL, func(m *domain.Message) { m.Crashes, m.Blacklisted, m.Node = 0, false, "" }},
		} {
			t.Run(act.name, func(t *testing.T) {
				t.Parallel()
				e := setupEngine(t, open)
				msgs, dead := blacklisted(t, e)
				_, err := e.transition(t, store.TransitionParams{ID: msgs[0].ID, From: []domain.Status{domain.StatusNDLV},
					To: act.to, Update: act.update, History: domain.HistoryEntry{Actor: "ops", Reason: act.name}})
				require.NoError(t, err)
				before := e.message(t, msgs[0].ID)
				entries := len(e.history(t, msgs[0].ID))

				rec := rejoin(t, e, dead)
				require.Empty(t, rec.TakenBack, "the operator's decision stands")
				after := e.message(t, msgs[0].ID)
				require.Equal(t, before.Status, after.Status)
				require.Equal(t, before.Crashes, after.Crashes)
				require.Equal(t, before.Blacklisted, after.Blacklisted)
				require.Len(t, e.history(t, msgs[0].ID), entries, "nothing is written")
				requireConsistent(t, e.testBundle)
			})
		}
	})

	t.Run("ACrashOfAProcessThatDiedStands", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs, dead := blacklisted(t, e)
		// Another incarnation of the id joins: the paused process is
		// dead, and never comes back.
		e.node = e.join(t, "N1")
		rec := rejoin(t, e, dead)
		require.Empty(t, rec.TakenBack)
		head := e.message(t, msgs[0].ID)
		require.Equal(t, domain.StatusNDLV, head.Status)
		require.True(t, head.Blacklisted)
		require.Equal(t, 2, head.Crashes)
		requireConsistent(t, e.testBundle)
	})
}
