package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// testReceivers holds the cases of store.ClaimParams.Delivers: a claim
// starts nothing of a queue whose receiver the node has not configured
// (§8) — not its TBDL messages, not its due retries, not its blacklist
// candidates — and leaves every such message as it was, counting nothing;
// routing goes on.
func testReceivers(t *testing.T, open Opener) {
	archiveOnly := []string{ReceiverARCHIVE}

	t.Run("AnUnconfiguredReceiversQueuesAreLeftAlone", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		waiting := append(outbound(2), eoioOutbound("ORDERS", 2)...)
		archived := NewOutboundMessage(NewMessage(), ReceiverARCHIVE)
		e.insert(t, append(waiting, archived)...)
		before := e.snapshot(t, waiting...)

		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: archiveOnly, Candidates: store.CandidatesSkip})
		require.Equal(t, idsOf(archived), claimedIDs(res), "the other queues are still claimed")
		require.False(t, res.More, "nothing else is ready for this node")
		require.Zero(t, res.NextDue)
		require.Zero(t, res.Candidates)
		require.Equal(t, before, e.snapshot(t, waiting...), "nothing about the messages left alone changes")

		// The claim that rides with an outcome leaves them alone too.
		rec := e.record(t, &store.ClaimParams{Limit: 10, Receivers: archiveOnly}, delivered(res.Claimed[0]))
		require.Empty(t, rec.Claim.Claimed)
		require.False(t, rec.Claim.More)
		require.Equal(t, before, e.snapshot(t, waiting...))
		requireConsistent(t, e.testBundle)

		// A node that has the receiver claims them.
		res = e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: []string{ReceiverARCHIVE, ReceiverWMS}})
		require.ElementsMatch(t, idsOf(waiting[0], waiting[1], waiting[2]), claimedIDs(res), "EO both, EOIO its head")
	})

	t.Run("MoreIsFalseWhenOnlyUnconfiguredWorkRemains", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		// In name order: a WMS queue, the ARCHIVE queue, more WMS queues.
		before := eoioOutbound("Z", 1)
		archived := NewOutboundMessage(NewEOIOMessage("A"), ReceiverARCHIVE)
		after := outbound(3)
		require.Less(t, before[0].Queue, archived.Queue)
		require.Less(t, archived.Queue, after[0].Queue)
		e.insert(t, append(append(before, archived), after...)...)

		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 1, Receivers: archiveOnly})
		require.Equal(t, idsOf(archived), claimedIDs(res))
		require.False(t, res.More, "the claim is full, but what is left is not this node's")

		more := NewOutboundMessage(NewMessage(), ReceiverARCHIVE)
		e.insert(t, more, NewOutboundMessage(NewMessage(), ReceiverARCHIVE))
		res = e.claimAs(t, e.node, store.ClaimParams{Limit: 1, Receivers: archiveOnly})
		require.Len(t, res.Claimed, 1)
		require.True(t, res.More, "work of its own left over: more")
	})

	t.Run("AnUnconfiguredReceiversRetriesWait", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		due := eoioOutbound("ORDERS", 2)
		later := outbound(1)
		e.insert(t, append(due, later...)...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10})
		require.ElementsMatch(t, idsOf(due[0], later[0]), claimedIDs(res))
		now := store.Outcome{ID: due[0].ID, Kind: store.OutcomeRetry, Error: "HTTP 503", Class: domain.ErrorTransient}
		inAnHour := store.Outcome{ID: later[0].ID, Kind: store.OutcomeRetry, Error: "HTTP 503", Class: domain.ErrorTransient,
			RetryIn: time.Hour}
		for _, c := range res.Claimed {
			if c.Message.ID == now.ID {
				now.Epoch = c.Epoch
			} else {
				inAnHour.Epoch = c.Epoch
			}
		}
		e.record(t, nil, now, inAnHour)
		all := append(due, later...)
		before := e.snapshot(t, all...)

		res = e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: archiveOnly})
		require.Empty(t, res.Claimed, "a due retry of a receiver the node has not configured is not claimed")
		require.False(t, res.More)
		require.Zero(t, res.NextDue, "nor does its next retry wake the node")
		require.Equal(t, before, e.snapshot(t, all...))

		res = e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: []string{ReceiverWMS}})
		require.Equal(t, idsOf(due[0]), claimedIDs(res), "a node that has the receiver claims the due retry")
		require.WithinDuration(t, Now().Add(time.Hour), res.NextDue, time.Minute)
	})

	t.Run("AnUnconfiguredReceiversCandidatesAreNotCounted", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		cand := eoioOutbound("ORDERS", 1)[0]
		cand.Crashes = 1
		archived := NewOutboundMessage(NewMessage(), ReceiverARCHIVE)
		e.insert(t, cand, archived)
		before := e.snapshot(t, cand)

		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: archiveOnly, Candidates: store.CandidatesSkip})
		require.Equal(t, idsOf(archived), claimedIDs(res))
		require.Zero(t, res.Candidates, "a candidate the node may not deliver is none of its candidates")
		alone := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: archiveOnly, Candidates: store.CandidatesAlone})
		require.Empty(t, alone.Claimed)
		require.Equal(t, before, e.snapshot(t, cand))

		res = e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: []string{ReceiverWMS}, Candidates: store.CandidatesSkip})
		require.Equal(t, 1, res.Candidates)
	})

	t.Run("NoReceiversRouteAndClaimNothing", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		eo, ordered := NewMessage(), NewEOIOMessage("ORDERS")
		e.insert(t, eo, ordered)

		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Receivers: []string{}})
		require.ElementsMatch(t, idsOf(eo, ordered), idsOf(res.Routed...), "routing calls no receiver: it goes on")
		require.Empty(t, res.Claimed, "an empty list of receivers claims no outbound message")
		require.False(t, res.More)
		for _, m := range []*domain.Message{eo, ordered} {
			got := e.message(t, m.ID)
			require.Equal(t, domain.Outbound, got.Stage)
			require.Equal(t, domain.StatusTBDL, got.Status, "it waits for a node that has its receiver")
		}
		requireConsistent(t, e.testBundle)
	})
}

// left is what a claim must not change of a message it leaves alone.
type left struct {
	Message *domain.Message
	History int
	Counts  map[domain.Status]int64
}

// snapshot records msgs as stored now, with their history's length and
// their queue's counters.
func (e *engineBundle) snapshot(t *testing.T, msgs ...*domain.Message) []left {
	t.Helper()
	out := make([]left, len(msgs))
	for i, m := range msgs {
		got := e.message(t, m.ID)
		out[i] = left{Message: got, History: len(e.history(t, m.ID)), Counts: e.counts(t, got.Queue)}
	}
	return out
}
