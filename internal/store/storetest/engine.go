package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// RunEngine runs the conformance suite of store.EngineStore, the seam the
// delivery engine works through, against the stores open returns; each must
// implement store.EngineStore.
func RunEngine(t *testing.T, open Opener) {
	groups := []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"Claim", testClaim},
		{"Record", testRecord},
		{"Fencing", testFencing},
		{"Recover", testRecover},
		{"TakeBack", testTakeBack},
		{"Checks", func(t *testing.T, open Opener) { testChecks(t, engineRig(open)) }},
		{"Switch", testSwitch},
		{"Liveness", testLiveness},
		{"Receivers", testReceivers},
		{"Contention", testContention},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// engineBundle is a store with a node joined to it.
type engineBundle struct {
	*testBundle
	eng  store.EngineStore
	node store.Node
}

func setupEngine(t *testing.T, open Opener) *engineBundle {
	t.Helper()
	b := setup(t, open)
	eng, ok := b.store.(store.EngineStore)
	require.True(t, ok, "%T does not implement store.EngineStore", b.store)
	e := &engineBundle{testBundle: b, eng: eng}
	e.node = e.join(t, "N1")
	return e
}

// join starts a new incarnation of node id.
func (e *engineBundle) join(t *testing.T, id string) store.Node {
	t.Helper()
	j, err := e.eng.Join(e.ctx, store.JoinParams{ID: id, TTL: time.Hour, Heartbeat: testHeartbeat, Receivers: Receivers})
	require.NoError(t, err)
	require.Equal(t, id, j.Node.ID)
	return j.Node
}

// claimAs claims for node n, which must succeed.
func (e *engineBundle) claimAs(t *testing.T, n store.Node, p store.ClaimParams) *store.ClaimResult {
	t.Helper()
	p.Node = n
	withDefaults(&p)
	res, err := e.eng.Claim(e.ctx, p)
	require.NoError(t, err)
	return res
}

func (e *engineBundle) claim(t *testing.T, limit int) *store.ClaimResult {
	t.Helper()
	return e.claimAs(t, e.node, store.ClaimParams{Limit: limit, Candidates: store.CandidatesSkip})
}

// record records outcomes for the bundle's node, which must succeed.
func (e *engineBundle) record(t *testing.T, claim *store.ClaimParams, outcomes ...store.Outcome) *store.RecordResult {
	t.Helper()
	if claim != nil {
		claim.Node = e.node
		withDefaults(claim)
	}
	res, err := e.eng.Record(e.ctx, store.RecordParams{Node: e.node, Outcomes: outcomes, Claim: claim})
	require.NoError(t, err)
	return res
}

// router routes by the receivers named at send time, and places EO
// messages in slot 0 of their queue.
var router = &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }}}

// withDefaults gives a claim the fixtures' window, router and receivers,
// and a route limit of the claim's limit, where the test left them unset
// (nil receivers; an empty list stays: no receiver configured).
func withDefaults(p *store.ClaimParams) {
	if p.Receivers == nil {
		p.Receivers = Receivers
	}
	if p.Window == 0 {
		p.Window = 32
	}
	if p.Router == nil {
		p.Router = router
	}
	if p.RouteLimit == 0 {
		p.RouteLimit = max(p.Limit, 1)
	}
}

// outboundOf lists the messages a claim's routing put in outbound queues:
// those it moved on, and those its splits made.
func outboundOf(res *store.ClaimResult) []*domain.Message {
	var out []*domain.Message
	for _, m := range res.Routed {
		if m.Stage == domain.Outbound {
			out = append(out, m)
		}
	}
	return append(out, res.Created...)
}

// queuesOf lists the queues of the messages a claim took, in its order.
func queuesOf(res *store.ClaimResult) []string {
	qs := []string{}
	for _, c := range res.Claimed {
		qs = append(qs, c.Message.Queue)
	}
	return qs
}

func claimedIDs(res *store.ClaimResult) []string {
	ids := []string{}
	for _, c := range res.Claimed {
		ids = append(ids, c.Message.ID)
	}
	return ids
}

func delivered(c store.Claimed) store.Outcome {
	return store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: store.OutcomeDelivered}
}

// failed is the outcome of a delivery that failed with an HTTP 503: a
// retry in an hour, or NDLV.
func failed(c store.Claimed, kind store.OutcomeKind) store.Outcome {
	o := store.Outcome{ID: c.Message.ID, Epoch: c.Epoch, Kind: kind, Error: "HTTP 503", Class: domain.ErrorTransient}
	if kind == store.OutcomeRetry {
		o.RetryIn = time.Hour
	}
	return o
}

// outbound returns n outbound EO messages for WMS on one queue.
func outbound(n int) []*domain.Message {
	parent := NewMessage()
	var out []*domain.Message
	for range n {
		out = append(out, NewOutboundMessage(parent, ReceiverWMS))
	}
	return out
}

// eoioOutbound returns n outbound EOIO messages of appQueue for WMS.
func eoioOutbound(appQueue string, n int) []*domain.Message {
	parent := NewEOIOMessage(appQueue)
	var out []*domain.Message
	for range n {
		out = append(out, NewOutboundMessage(parent, ReceiverWMS))
	}
	return out
}

func testClaim(t *testing.T, open Opener) {
	t.Run("ClaimsAcrossQueuesInOneCommit", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		var all []*domain.Message
		for i := range 3 {
			for _, m := range outbound(2) {
				all = append(all, InQueue(m, domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 3, i)))
			}
		}
		all = append(all, eoioOutbound("ORDERS", 2)...)
		all = append(all, eoioOutbound("INVOICES", 2)...)
		e.insert(t, all...)
		before := e.store.Commits()
		res := e.claim(t, 100)
		require.Equal(t, before+1, e.store.Commits(), "one claim, one commit")
		require.Len(t, res.Claimed, 8, "both messages of each of three EO queues, one head of each EOIO queue")
		for _, c := range res.Claimed {
			require.Equal(t, domain.StatusDLNG, c.Message.Status)
			require.Equal(t, e.node.ID, c.Message.Node)
			require.Equal(t, 1, c.Message.Attempts)
			require.Equal(t, PayloadOf(c.Message), c.Payload, "an outbound claim carries the payload")
			require.Equal(t, domain.StatusDLNG, e.message(t, c.Message.ID).Status, "DLNG is durable before any receiver is called")
			h := e.history(t, c.Message.ID)
			require.Equal(t, domain.StatusDLNG, h[len(h)-1].To)
			require.Equal(t, e.node.ID, h[len(h)-1].Node)
		}
		require.Empty(t, e.claim(t, 100).Claimed, "nothing else is ready")
	})

	t.Run("RoutesInboundMessagesWithTheTuning", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		e.update(t, func(w store.Writer) error {
			return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Sub: ReceiverWMS, Value: 4})
		})
		in := NewMessage()
		e.insert(t, in)
		slot := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(n int) int { return n - 1 }}}
		before := e.store.Commits()
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Router: slot})
		require.Equal(t, before+1, e.store.Commits(), "routing and the claim of what it made ready: one commit")
		require.Len(t, res.Routed, 1)
		require.Empty(t, res.Created, "one receiver: no copy")
		moved := res.Routed[0]
		require.Equal(t, in.ID, moved.ID, "one message, one id (§3)")
		require.Equal(t, domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 4, 3), moved.Queue, "placed with the tuning in force")
		require.Equal(t, domain.Outbound, moved.Stage)
		require.Equal(t, ReceiverWMS, moved.Receiver)
		require.Equal(t, in.Queue, moved.InboundQueue, "it says where it came from")
		require.Equal(t, []string{in.ID}, claimedIDs(res), "what routing made ready is claimed at once")
		require.Equal(t, PayloadOf(in), res.Claimed[0].Payload)
		h := e.history(t, in.ID)
		require.Equal(t, []domain.Status{domain.StatusTBDL, domain.StatusTBDL, domain.StatusDLNG},
			[]domain.Status{h[0].To, h[1].To, h[2].To})
		require.Equal(t, "receiver determination (named at send time): WMS; moved on to "+moved.Queue, h[1].Reason)
		require.Equal(t, e.node.ID, h[1].Node)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1}, e.counts(t, in.Queue),
			"its inbound queue counts it as delivered: it passed through")
		require.Empty(t, e.queueIDs(t, in.Queue, store.QueueMessagesParams{}), "and holds it no more")
		requireConsistent(t, e.testBundle)

		e.record(t, nil, delivered(res.Claimed[0]))
		require.Equal(t, domain.StatusDLVD, e.message(t, in.ID).Status, "the id the producer got is the one delivered")
		e.update(t, func(w store.Writer) error { return w.Delete(in.ID) })
		require.Empty(t, e.counts(t, in.Queue), "purged, it is counted nowhere")
		requireConsistent(t, e.testBundle)
	})

	t.Run("RoutesInTheSendsTransaction", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		in, other := NewMessage(), NewMessage()
		router := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(n int) int { return n - 1 }}}
		var moved *domain.Message
		e.update(t, func(w store.Writer) error {
			for _, m := range []*domain.Message{in, other} {
				if err := w.Insert(m, PayloadOf(m), Entry("received")); err != nil {
					return err
				}
				res, err := w.Route(store.RouteParams{ID: m.ID, Router: router, Entry: Entry("")})
				if err != nil {
					return err
				}
				moved = res.Message
			}
			return nil
		})
		require.Equal(t, other.ID, moved.ID)
		for _, m := range []*domain.Message{in, other} {
			got := e.message(t, m.ID)
			require.Equal(t, domain.Outbound, got.Stage, "stored where routing put it")
			require.Equal(t, m.Queue, got.InboundQueue, "it says where it came from")
			require.Equal(t, domain.StatusTBDL, got.Status)
			require.Len(t, e.history(t, m.ID), 2, "the send and the routing")
		}
		require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 2}, e.counts(t, in.Queue))
		requireConsistent(t, e.testBundle)

		res := e.claim(t, 10)
		require.ElementsMatch(t, idsOf(in, other), claimedIDs(res), "claimed where they were moved to")
		requireConsistent(t, e.testBundle)
	})

	t.Run("SeveralReceiversSplitTheMessage", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		in := NewMessage()
		in.Receivers = []string{ReceiverWMS, ReceiverARCHIVE}
		e.insert(t, in)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(in), idsOf(res.Routed...))
		require.Equal(t, domain.StatusDLVD, res.Routed[0].Status, "the message split ends delivered")
		require.Len(t, res.Created, 2, "one message per receiver")
		for _, c := range res.Created {
			require.Equal(t, in.ID, c.ParentID)
			require.Equal(t, in.ID, c.SentID())
		}
		h := e.history(t, in.ID)
		require.Equal(t, "receiver determination (named at send time): WMS, ARCHIVE; split into 2", h[len(h)-1].Reason)
		require.ElementsMatch(t, idsOf(res.Created...), claimedIDs(res))
		requireConsistent(t, e.testBundle)
	})

	t.Run("RoutesByTheRules", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		in := NewMessage()
		in.Receivers = nil
		e.insert(t, in)
		rules := &placement.Router{Placer: router.Placer, Rules: []placement.Rule{
			{Sender: SenderERP, Interface: "OrderCreate", Receivers: []string{ReceiverWMS, ReceiverARCHIVE}},
			{Sender: SenderERP, Receivers: []string{ReceiverWMS}},
			{Sender: SenderSHOP, Receivers: []string{"CRM"}},
		}}
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Router: rules})
		var receivers []string
		for _, m := range res.Created {
			receivers = append(receivers, m.Receiver)
		}
		require.Equal(t, []string{ReceiverWMS, ReceiverARCHIVE}, receivers, "each matching rule's receivers, once each")
	})

	t.Run("NoReceiverIsNDLVAndBlocksEOIO", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		first, second := NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS")
		first.Receivers = nil
		e.insert(t, first, second)
		res := e.claim(t, 10)
		require.Len(t, res.Routed, 1, "the queue is blocked by the first")
		m := e.message(t, first.ID)
		require.Equal(t, domain.StatusNDLV, m.Status)
		require.Equal(t, domain.ErrorPermanent, m.ErrorClass)
		require.Contains(t, m.Error, "no receiver")
		require.Equal(t, domain.StatusHOLD, e.message(t, second.ID).Status)
		requireConsistent(t, e.testBundle)
	})

	t.Run("EOIOInboundRoutedInOrder", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		in := []*domain.Message{NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS"), NewEOIOMessage("ORDERS")}
		e.insert(t, in...)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(in...), idsOf(res.Routed...), "an inbound EOIO queue is routed in seq order")
		for i, m := range res.Created {
			require.Equal(t, uint64(i+1), e.message(t, m.ID).Seq, "the outbound queue keeps the order")
		}
		require.Len(t, res.Claimed, 1, "and delivers one at a time")
	})

	t.Run("EOWindow", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(10)
		e.insert(t, msgs...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 100, Window: 4})
		require.Equal(t, idsOf(msgs[:4]...), claimedIDs(res), "the window's first messages in seq order")
		require.Empty(t, e.claimAs(t, e.node, store.ClaimParams{Limit: 100, Window: 4}).Claimed, "the window is full")
		rec := e.record(t, &store.ClaimParams{Limit: 100, Window: 4}, delivered(res.Claimed[0]), delivered(res.Claimed[2]))
		require.Equal(t, idsOf(msgs[4:6]...), claimedIDs(rec.Claim), "two outcomes make room for two more, in the same commit")
	})

	t.Run("EOIOStrictlyOne", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := eoioOutbound("ORDERS", 3)
		e.insert(t, msgs...)
		res := e.claim(t, 100)
		require.Equal(t, idsOf(msgs[0]), claimedIDs(res))
		require.Empty(t, e.claim(t, 100).Claimed, "nothing more while the head is DLNG")
		before := e.store.Commits()
		rec := e.record(t, &store.ClaimParams{Limit: 100, Candidates: store.CandidatesSkip}, delivered(res.Claimed[0]))
		require.Equal(t, before+1, e.store.Commits())
		require.Equal(t, idsOf(msgs[1]), claimedIDs(rec.Claim), "the next head rides in the transaction of the outcome")
	})

	t.Run("LimitAndTurns", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		a := eoioOutbound("A", 1)
		b := eoioOutbound("B", 1)
		c := eoioOutbound("C", 1)
		e.insert(t, append(append(a, b...), c...)...)
		first := e.claim(t, 2)
		require.Len(t, first.Claimed, 2)
		require.True(t, first.More, "it stopped at its limit")
		second := e.claim(t, 2)
		require.Len(t, second.Claimed, 1, "the queue left out comes next")
		require.NotContains(t, claimedIDs(first), second.Claimed[0].Message.ID)
	})

	t.Run("TurnsHoldWhenTheClaimRoutes", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		queues := make([]string, 20)
		for i := range queues {
			queues[i] = domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 20, i)
		}
		// The queues are created last first: the order they are stored in
		// is not the turn's.
		for _, q := range slices.Backward(queues) {
			var msgs []*domain.Message
			for _, m := range outbound(3) {
				msgs = append(msgs, InQueue(m, q))
			}
			e.insert(t, msgs...)
		}
		first := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Window: 1})
		var outcomes []store.Outcome
		for _, c := range first.Claimed {
			outcomes = append(outcomes, delivered(c))
		}
		require.Equal(t, queues[:10], queuesOf(first), "the first claim serves the queues in turn")
		e.record(t, nil, outcomes...)
		e.insert(t, NewMessage())
		second := e.claimAs(t, e.node, store.ClaimParams{Limit: 5, Window: 1, RouteLimit: 1})
		require.Len(t, second.Routed, 1)
		require.Equal(t, queues[10:15], queuesOf(second), "a claim that routes goes on where the last one stopped")
	})

	t.Run("RouteAndClaimLimitsApart", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		e.insert(t, NewMessage(), NewMessage(), NewMessage())
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 1, RouteLimit: 2})
		require.Len(t, res.Routed, 2, "routing needs no worker: its own limit")
		require.Len(t, res.Claimed, 1, "one delivery per free worker")
		require.True(t, res.More)
	})

	t.Run("StoppedQueueIsNotClaimed", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(2)
		e.insert(t, msgs...)
		e.update(t, func(w store.Writer) error { return w.SetStopped(msgs[0].Queue, true) })
		require.Empty(t, e.claim(t, 10).Claimed)
		e.update(t, func(w store.Writer) error { return w.SetStopped(msgs[0].Queue, false) })
		require.Len(t, e.claim(t, 10).Claimed, 2)
	})

	t.Run("WaitHoldsEOQueueUntilDue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(3)
		e.insert(t, msgs...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 1})
		later := Now().Add(time.Hour)
		e.record(t, nil, failed(res.Claimed[0], store.OutcomeRetry))
		next := e.claim(t, 10)
		require.Empty(t, next.Claimed, "no new delivery starts while the EO queue has a WAIT message (§3)")
		require.WithinDuration(t, later, next.NextDue, time.Second, "the claim says when the retry is due")
	})

	t.Run("ARetryStopsTheClaimInItsOwnCommit", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(4)
		e.insert(t, msgs...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 2})
		require.Equal(t, idsOf(msgs[:2]...), claimedIDs(res))
		rec := e.record(t, &store.ClaimParams{Limit: 10}, delivered(res.Claimed[0]), failed(res.Claimed[1], store.OutcomeRetry))
		require.Empty(t, rec.Claim.Claimed, "the queue WAITs from the outcome's commit on: the claim with it starts nothing")
		require.WithinDuration(t, Now().Add(time.Hour), rec.Claim.NextDue, time.Minute, "and says when the retry is due")
		require.Equal(t, domain.StatusDLVD, e.message(t, msgs[0].ID).Status)
		require.Equal(t, domain.StatusTBDL, e.message(t, msgs[2].ID).Status)
	})

	t.Run("DueWaitIsClaimed", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := eoioOutbound("ORDERS", 2)
		e.insert(t, msgs...)
		res := e.claim(t, 1)
		e.record(t, nil, store.Outcome{ID: msgs[0].ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeRetry,
			Error: "HTTP 503", Class: domain.ErrorTransient})
		require.Equal(t, domain.StatusHOLD, e.message(t, msgs[1].ID).Status, "EOIO: the rest HOLD behind a WAIT head")
		again := e.claim(t, 10)
		require.Equal(t, idsOf(msgs[0]), claimedIDs(again), "the due retry, and only it")
		require.Equal(t, 2, again.Claimed[0].Message.Attempts)
		require.Zero(t, again.NextDue)
	})

	t.Run("BlockedQueueIsNotClaimed", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		eo := outbound(2)
		e.insert(t, eo...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 1})
		e.record(t, nil, store.Outcome{ID: eo[0].ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeFailed,
			Error: "no attempts left", Class: domain.ErrorTransient})
		require.Empty(t, e.claim(t, 10).Claimed, "an EO queue blocked by exhausted retries starts nothing")
	})

	t.Run("NothingStartsInABlockedEOQueueEvenAheadOfTheBlocker", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(2)
		e.insert(t, msgs...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 2})
		e.record(t, nil,
			store.Outcome{ID: msgs[0].ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeFailed, Error: "HTTP 400",
				Class: domain.ErrorPermanent},
			store.Outcome{ID: msgs[1].ID, Epoch: res.Claimed[1].Epoch, Kind: store.OutcomeFailed, Error: "no attempts left",
				Class: domain.ErrorTransient})
		// An operator resends the first: it is TBDL again, ahead of the
		// message that blocks the queue, and waits for it like the rest.
		e.move(t, msgs[0].ID, domain.StatusNDLV, domain.StatusTBDL)
		require.Equal(t, msgs[1].ID, e.headID(t, msgs[0].Queue), "the head is the message that blocks the queue")
		require.Empty(t, e.claim(t, 10).Claimed, "while an EO queue is blocked, no new delivery of it starts (§3)")
	})

	t.Run("PermanentErrorLetsEOGoOn", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		eo := outbound(2)
		e.insert(t, eo...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 1})
		rec := e.record(t, &store.ClaimParams{Limit: 10}, store.Outcome{ID: eo[0].ID, Epoch: res.Claimed[0].Epoch,
			Kind: store.OutcomeFailed, Error: "HTTP 400", Class: domain.ErrorPermanent})
		require.Equal(t, idsOf(eo[1]), claimedIDs(rec.Claim))
	})

	t.Run("Candidates", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		plain := outbound(1)[0]
		cand := eoioOutbound("ORDERS", 1)[0]
		cand.Crashes = 1
		e.insert(t, plain, cand)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(plain), claimedIDs(res), "CandidatesSkip leaves the candidate")
		require.Equal(t, 1, res.Candidates)
		e.record(t, nil, delivered(res.Claimed[0]))
		alone := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone})
		require.Equal(t, idsOf(cand), claimedIDs(alone), "CandidatesAlone claims the candidate, alone")
		any := outbound(1)[0]
		any.Crashes = 1
		e.insert(t, any)
		require.Equal(t, idsOf(any), claimedIDs(e.claimAs(t, e.node, store.ClaimParams{Limit: 10})), "CandidatesAsAny")
	})
}

func testRecord(t *testing.T, open Opener) {
	t.Run("Outcomes", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(4)
		e.insert(t, msgs...)
		res := e.claim(t, 10)
		require.Len(t, res.Claimed, 4)
		next := Now().Add(time.Hour)
		rec := e.record(t, nil,
			delivered(res.Claimed[0]),
			store.Outcome{ID: msgs[1].ID, Epoch: res.Claimed[1].Epoch, Kind: store.OutcomeRetry, Error: "HTTP 503",
				Class: domain.ErrorTransient, RetryIn: time.Hour},
			store.Outcome{ID: msgs[2].ID, Epoch: res.Claimed[2].Epoch, Kind: store.OutcomeFailed, Error: "HTTP 400",
				Class: domain.ErrorPermanent},
			store.Outcome{ID: msgs[3].ID, Epoch: res.Claimed[3].Epoch, Kind: store.OutcomeHandBack},
		)
		require.Empty(t, rec.Conflicts)
		for i, want := range []domain.Status{domain.StatusDLVD, domain.StatusWAIT, domain.StatusNDLV, domain.StatusTBDL} {
			m := e.message(t, msgs[i].ID)
			require.Equal(t, want, m.Status)
			require.Equal(t, m, rec.Applied[i], "Applied is the message as stored")
			require.Empty(t, m.Node, "a settled message is on no node")
		}
		w := e.message(t, msgs[1].ID)
		require.Equal(t, "HTTP 503", w.Error)
		require.Equal(t, domain.ErrorTransient, w.ErrorClass)
		require.WithinDuration(t, next, *w.NextAttemptAt, time.Second, "an hour after the outcome, on the store's clock")
		require.Equal(t, domain.ErrorPermanent, e.message(t, msgs[2].ID).ErrorClass)
		require.Zero(t, e.message(t, msgs[3].ID).Attempts, "a hand-back does not count as an attempt")
		require.Equal(t, map[domain.Status]int64{domain.StatusDLVD: 1, domain.StatusWAIT: 1, domain.StatusNDLV: 1,
			domain.StatusTBDL: 1}, e.counts(t, msgs[0].Queue))
		requireConsistent(t, e.testBundle)
	})

	t.Run("ConflictsAreReportedAndTheRestApplies", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := outbound(2)
		e.insert(t, msgs...)
		res := e.claim(t, 10)
		e.record(t, nil, delivered(res.Claimed[0]))
		rec := e.record(t, nil, delivered(res.Claimed[0]), delivered(res.Claimed[1]))
		require.Len(t, rec.Conflicts, 1)
		require.ErrorIs(t, rec.Conflicts[msgs[0].ID], domain.ErrConflict, "an outcome recorded twice")
		require.Nil(t, rec.Applied[0])
		require.Equal(t, domain.StatusDLVD, rec.Applied[1].Status)
		require.Len(t, e.history(t, msgs[0].ID), 3, "the refused outcome wrote nothing")
	})

	t.Run("RoutedMessagesShareThePayload", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		in := NewEOIOMessage("ORDERS")
		in.Receivers = []string{ReceiverWMS, ReceiverARCHIVE}
		e.insert(t, in)
		res := e.claim(t, 10)
		require.Equal(t, domain.StatusDLVD, e.message(t, in.ID).Status)
		require.Len(t, res.Created, 2)
		require.Len(t, res.Claimed, 2, "the outbound heads are claimed in the same transaction")
		for _, out := range res.Created {
			m := e.message(t, out.ID)
			require.Equal(t, in.ID, m.ParentID)
			require.Equal(t, domain.Outbound, m.Stage)
			require.Equal(t, in.Size, m.Size)
			require.Equal(t, in.AppQueue, m.AppQueue)
			require.Equal(t, in.Headers, m.Headers)
			require.Equal(t, domain.StatusDLNG, m.Status)
			require.Equal(t, PayloadOf(in), e.payload(t, out.ID))
		}
		// The payload lives as long as one of the messages that share it.
		e.update(t, func(w store.Writer) error { return w.Delete(in.ID) })
		require.Equal(t, PayloadOf(in), e.payload(t, res.Created[0].ID))
		e.update(t, func(w store.Writer) error { return w.Delete(res.Created[0].ID) })
		require.Equal(t, PayloadOf(in), e.payload(t, res.Created[1].ID))
		e.update(t, func(w store.Writer) error { return w.Delete(res.Created[1].ID) })
		requireConsistent(t, e.testBundle)
	})

	t.Run("RoutedIntoABlockedEOIOQueueHolds", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		blocked := NotDelivered(eoioOutbound("ORDERS", 1)[0], domain.ErrorPermanent)
		in := NewEOIOMessage("ORDERS")
		e.insert(t, blocked, in)
		res := e.claim(t, 10)
		require.Equal(t, idsOf(in), idsOf(outboundOf(res)...))
		require.Equal(t, domain.StatusHOLD, e.message(t, in.ID).Status)
		require.Empty(t, res.Claimed)
	})

	t.Run("FailedEOIOHeadHoldsItsQueue", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		msgs := eoioOutbound("ORDERS", 3)
		e.insert(t, msgs...)
		res := e.claim(t, 10)
		e.record(t, nil, store.Outcome{ID: msgs[0].ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeFailed,
			Error: "HTTP 400", Class: domain.ErrorPermanent})
		require.Equal(t, map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusHOLD: 2}, e.counts(t, msgs[0].Queue))
		requireConsistent(t, e.testBundle)
	})
}

func testFencing(t *testing.T, open Opener) {
	t.Run("StaleEpochIsRefused", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		m := outbound(1)[0]
		e.insert(t, m)
		res := e.claim(t, 1)
		stale := delivered(res.Claimed[0])
		stale.Epoch++
		rec, err := e.eng.Record(e.ctx, store.RecordParams{Node: e.node, Outcomes: []store.Outcome{stale}})
		if err == nil {
			require.ErrorIs(t, rec.Conflicts[m.ID], store.ErrFenced)
		} else {
			require.ErrorIs(t, err, store.ErrFenced)
		}
		require.Equal(t, domain.StatusDLNG, e.message(t, m.ID).Status, "a stale epoch changes nothing")
	})

	t.Run("ANewIncarnationFencesTheOld", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		m := outbound(1)[0]
		e.insert(t, m)
		res := e.claim(t, 1)
		old := e.node
		e.node = e.join(t, "N1")
		require.NotEqual(t, old.Incarnation, e.node.Incarnation, "a restarted node is a new incarnation")
		_, err := e.eng.Record(e.ctx, store.RecordParams{Node: old, Outcomes: []store.Outcome{delivered(res.Claimed[0])}})
		require.ErrorIs(t, err, store.ErrFenced)
		_, err = e.eng.Claim(e.ctx, store.ClaimParams{Node: old, Limit: 1, Window: 1, Receivers: Receivers})
		require.ErrorIs(t, err, store.ErrFenced)
		_, err = e.eng.Heartbeat(e.ctx, store.HeartbeatParams{Node: old, TTL: time.Minute})
		require.ErrorIs(t, err, store.ErrFenced)
		require.Equal(t, domain.StatusDLNG, e.message(t, m.ID).Status)
	})
}

func testRecover(t *testing.T, open Opener) {
	recoverParams := func(e *engineBundle, dead store.Node) store.RecoverParams {
		return store.RecoverParams{Node: e.node, Dead: dead, Blacklisting: true, Crashes: 2}
	}

	t.Run("OnlyTheDeadIncarnationsDLNG", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		first := outbound(2)
		e.insert(t, first...)
		require.Len(t, e.claim(t, 10).Claimed, 2)
		// The node restarts: in a cluster an earlier incarnation of the
		// same id is dead, whatever its last heartbeat.
		dead := e.node
		j, err := e.eng.Join(e.ctx, store.JoinParams{ID: "N1", TTL: time.Hour, Heartbeat: testHeartbeat, Receivers: Receivers})
		require.NoError(t, err)
		require.Equal(t, []store.Node{dead}, j.Dead, "the join names the incarnation that left messages DLNG")
		e.node = j.Node
		second := eoioOutbound("ORDERS", 1)
		e.insert(t, second...)
		require.Len(t, e.claim(t, 10).Claimed, 1)

		res, err := e.eng.Recover(e.ctx, recoverParams(e, dead))
		require.NoError(t, err)
		require.ElementsMatch(t, idsOf(first...), idsOf(res.Requeued...))
		require.Empty(t, res.Blacklisted, "two were in flight: neither is blamed")
		for _, m := range first {
			got := e.message(t, m.ID)
			require.Equal(t, domain.StatusTBDL, got.Status)
			require.Equal(t, 1, got.Crashes)
			require.Equal(t, domain.ErrorCrash, got.ErrorClass)
			require.Empty(t, got.Node)
		}
		require.Equal(t, domain.StatusDLNG, e.message(t, second[0].ID).Status, "the live incarnation's message is untouched")

		again, err := e.eng.Recover(e.ctx, recoverParams(e, dead))
		require.NoError(t, err)
		require.Empty(t, again.Requeued, "recovery happens once")
		require.Equal(t, 1, e.message(t, first[0].ID).Crashes)
		requireConsistent(t, e.testBundle)
	})

	t.Run("BlacklistsAtTheThresholdWhenAlone", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		poison := eoioOutbound("ORDERS", 2)
		poison[0].Crashes = 1
		e.insert(t, poison...)
		res := e.claimAs(t, e.node, store.ClaimParams{Limit: 10, Candidates: store.CandidatesAlone})
		require.Len(t, res.Claimed, 1)
		dead := e.node
		e.node = e.join(t, "N1")
		rec, err := e.eng.Recover(e.ctx, recoverParams(e, dead))
		require.NoError(t, err)
		require.Len(t, rec.Blacklisted, 1)
		m := e.message(t, poison[0].ID)
		require.Equal(t, domain.StatusNDLV, m.Status)
		require.True(t, m.Blacklisted)
		require.Equal(t, 2, m.Crashes)
		require.Equal(t, "N1", m.Node, "the node it took down last")
		require.Equal(t, domain.StatusHOLD, e.message(t, poison[1].ID).Status, "an EOIO queue is blocked by it")
		requireConsistent(t, e.testBundle)
	})
}
