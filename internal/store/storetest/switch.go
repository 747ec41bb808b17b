package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// claimedOf returns the claimed message with this id, failing without it.
func claimedOf(t *testing.T, res *store.ClaimResult, id string) store.Claimed {
	t.Helper()
	for _, c := range res.Claimed {
		if c.Message.ID == id {
			return c
		}
	}
	t.Fatalf("message %s was not claimed; claimed: %v", id, claimedIDs(res))
	return store.Claimed{}
}

// testSwitch specifies how claims and outcomes keep EOIO order across a
// switch and the error queues of shared queues (§10).
func testSwitch(t *testing.T, open Opener) {
	t.Run("TheNewSetWaitsForTheOldSet", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		a1, a2 := eoioOut(perAppXBQ, "A"), eoioOut(perAppXBQ, "A")
		e.insert(t, a1, a2)
		e.switchTo(t, sharedXB2, perAppXBQ)
		a3, c1 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C")
		b1 := eoioOut(sharedXB2, "B")
		e.insert(t, a3, c1, b1)

		res := e.claim(t, 10)
		require.ElementsMatch(t, idsOf(a1, b1), claimedIDs(res),
			"A's head in the new set waits for A's messages in the old set, and the shared queue with it")
		rec := e.record(t, &store.ClaimParams{Limit: 10}, delivered(claimedOf(t, res, a1.ID)))
		require.Equal(t, idsOf(a2), claimedIDs(rec.Claim))
		rec = e.record(t, &store.ClaimParams{Limit: 10}, delivered(claimedOf(t, rec.Claim, a2.ID)))
		require.Equal(t, idsOf(a3), claimedIDs(rec.Claim), "the old set drained: the new set goes on, in order")
		rec = e.record(t, &store.ClaimParams{Limit: 10}, delivered(claimedOf(t, rec.Claim, a3.ID)))
		require.Equal(t, idsOf(c1), claimedIDs(rec.Claim))
	})

	t.Run("InboundRoutingWaitsForTheOldSet", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		old := NewEOIOMessage("A")
		e.insert(t, old)
		e.switchTo(t, sharedXB2, perAppXBQ)
		newer := InQueue(NewEOIOMessage("A"), sharedXB2.Inbound(domain.RoleCentral, "A"))
		e.insert(t, newer)
		// The claim says there may be more as long as routing may have
		// let a waiting message go.
		var routed, created []*domain.Message
		for range 3 {
			res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, RouteLimit: 10})
			routed, created = append(routed, res.Routed...), append(created, outboundOf(res)...)
			if !res.More {
				break
			}
		}
		require.Equal(t, idsOf(old, newer), idsOf(routed...), "the old set's message first")
		require.Len(t, created, 2)
		for _, m := range created {
			require.Equal(t, sharedXB2.Outbound(domain.Code4(ReceiverWMS), "A"), m.Queue, "routed after the switch: the new set")
		}
		require.Less(t, e.message(t, created[0].ID).Seq, e.message(t, created[1].ID).Seq)
	})

	t.Run("AnErrorInASharedQueueMovesItsAppQueueToTheErrorQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		e.switchTo(t, sharedXB2, perAppXBQ)
		a1, c1, a2, a3 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C"), eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "A")
		e.insert(t, a1, c1, a2, a3)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(a1), claimedIDs(res))

		rec := e.record(t, &store.ClaimParams{Limit: 10}, failed(res.Claimed[0], store.OutcomeRetry))
		errorQueue := lane("A").ErrorQueue()
		require.Equal(t, errorQueue, rec.Applied[0].Queue, "the outcome reports the message where it is now")
		require.Equal(t, domain.StatusWAIT, rec.Applied[0].Status)
		require.Equal(t, idsOf(c1), claimedIDs(rec.Claim), "the shared queue goes on in the same commit")
		require.Equal(t, withStatuses(a1, domain.StatusWAIT, a2, domain.StatusHOLD, a3, domain.StatusHOLD), e.statuses(t, errorQueue))
		requireConsistent(t, e.testBundle)

		// Arrivals of A join the error queue while it holds messages.
		in := NewEOIOMessage("A")
		e.insert(t, InQueue(in, sharedXB2.Inbound(domain.RoleCentral, "A")))
		rec = e.record(t, &store.ClaimParams{Limit: 10}, delivered(claimedOf(t, rec.Claim, c1.ID)))
		require.Len(t, outboundOf(rec.Claim), 1)
		a4 := outboundOf(rec.Claim)[0]
		require.Equal(t, errorQueue, a4.Queue)
		require.Equal(t, domain.StatusHOLD, a4.Status)

		// Failing the head lets the app queue go on, in order, in the error queue.
		e.update(t, func(w store.Writer) error {
			if _, err := w.Transition(store.TransitionParams{ID: a1.ID, From: []domain.Status{domain.StatusWAIT}, To: domain.StatusFAIL,
				History: Entry("failed by an operator")}); err != nil {
				return err
			}
			return store.RestoreHold(w, errorQueue, Entry(""))
		})
		for _, next := range []*domain.Message{a2, a3, a4} {
			res := e.claim(t, 10)
			require.Equal(t, idsOf(next), claimedIDs(res))
			e.record(t, nil, delivered(res.Claimed[0]))
		}
		require.Empty(t, e.statuses(t, errorQueue))
		requireConsistent(t, e.testBundle)
	})

	t.Run("AFailedHeadOfAnOldQueueOfOneAppQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		a1 := eoioOut(perAppXBQ, "A")
		e.insert(t, a1)
		e.switchTo(t, sharedXB2, perAppXBQ)
		a2, c1 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C")
		e.insert(t, a2, c1)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(a1), claimedIDs(res), "A's new-set message heads the shared queue and waits")
		rec := e.record(t, &store.ClaimParams{Limit: 10}, failed(res.Claimed[0], store.OutcomeFailed))
		require.Equal(t, a1.Queue, rec.Applied[0].Queue, "the old queue is A's own: it stays blocked there (§4)")
		require.Equal(t, idsOf(c1), claimedIDs(rec.Claim), "A's waiting message left the shared queue: it goes on")
		require.Equal(t, withStatuses(a2, domain.StatusTBDL), e.statuses(t, lane("A").ErrorQueue()))
		require.Empty(t, e.claim(t, 10).Claimed, "the error queue waits for the blocked old queue")

		e.update(t, func(w store.Writer) error {
			_, err := w.Transition(store.TransitionParams{ID: a1.ID, From: []domain.Status{domain.StatusNDLV}, To: domain.StatusFAIL,
				History: Entry("failed by an operator")})
			return err
		})
		require.Equal(t, idsOf(a2), claimedIDs(e.claim(t, 10)))
	})

	t.Run("ABlacklistedMessageOfASharedQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		e.switchTo(t, sharedXB2, perAppXBQ)
		a1, a2, c1 := eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "A"), eoioOut(sharedXB2, "C")
		a1.Crashes = 1
		e.insert(t, a1, a2, c1)
		require.Len(t, e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone}).Claimed, 1)
		dead := e.node
		e.node = e.join(t, "N1")
		rec, err := e.eng.Recover(e.ctx, store.RecoverParams{Node: e.node, Dead: dead, Blacklisting: true, Crashes: 2})
		require.NoError(t, err)
		require.Len(t, rec.Blacklisted, 1)
		require.Equal(t, lane("A").ErrorQueue(), rec.Blacklisted[0].Queue)
		require.Equal(t, withStatuses(a1, domain.StatusNDLV, a2, domain.StatusHOLD), e.statuses(t, lane("A").ErrorQueue()))
		require.Equal(t, idsOf(c1), claimedIDs(e.claim(t, 10)), "the shared queue goes on")
		requireConsistent(t, e.testBundle)
	})

	t.Run("NoReceiverInASharedInboundQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		e.switchTo(t, sharedXB2, perAppXBQ)
		queue := sharedXB2.Inbound(domain.RoleCentral, "A")
		a1, a2, c1 := InQueue(NewEOIOMessage("A"), queue), InQueue(NewEOIOMessage("A"), queue), InQueue(NewEOIOMessage("C"), queue)
		a1.Receivers = nil
		e.insert(t, a1, a2, c1)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(a1, c1), idsOf(res.Routed...), "A's error takes A out of the shared queue; C is routed")
		errorQueue := domain.Lane{Stage: domain.Inbound, AppQueue: "A"}.ErrorQueue()
		require.Equal(t, errorQueue, res.Routed[0].Queue)
		require.Equal(t, withStatuses(a1, domain.StatusNDLV, a2, domain.StatusHOLD), e.statuses(t, errorQueue))
		requireConsistent(t, e.testBundle)
	})
}
