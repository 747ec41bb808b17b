package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// deadlocker is a store that counts the transactions its database aborted
// to break a deadlock (the PostgreSQL store).
type deadlocker interface {
	Deadlocks() uint64
}

// deadlocks returns the store's count of deadlocks broken, 0 for a store
// that cannot deadlock.
func (b *testBundle) deadlocks() uint64 {
	if d, ok := b.store.(deadlocker); ok {
		return d.Deadlocks()
	}
	return 0
}

// appQueues names n app queues, Q0…Q(n-1): in the order of their numbers
// they are not in name order (Q10 sorts before Q2).
func appQueues(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Q%d", i)
	}
	return out
}

// testContention holds what two transactions of the engine, or the engine
// and a writer, do at once (§14): the window holds under two claimers of a
// node, a claim never spins on rows another transaction holds, and
// transactions that lock many queues lock them in one order.
func testContention(t *testing.T, open Opener) {
	t.Run("TwoClaimsNeverTakeAnEOQueuePastItsWindow", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		const window, rounds = 8, 40
		msgs := outbound(window * 2 * rounds)
		e.insert(t, msgs...)
		queue := msgs[0].Queue
		p := store.ClaimParams{Node: e.node, Limit: 100, Window: window, Candidates: store.CandidatesSkip}
		withDefaults(&p)
		inFlight := e.claimAs(t, e.node, p).Claimed
		require.Len(t, inFlight, window)
		for round := range rounds {
			// The node's two claimers at once: its loop's claim, and the
			// claim that rides with the outcomes of what is in flight.
			var wg sync.WaitGroup
			start := make(chan struct{})
			var claimed, rode *store.ClaimResult
			wg.Go(func() {
				<-start
				res, err := e.eng.Claim(e.ctx, p)
				if err != nil {
					t.Errorf("claim: %v", err)
				}
				claimed = res
			})
			wg.Go(func() {
				<-start
				var outcomes []store.Outcome
				for _, c := range inFlight {
					outcomes = append(outcomes, delivered(c))
				}
				rp := p
				res, err := e.eng.Record(e.ctx, store.RecordParams{Node: e.node, Outcomes: outcomes, Claim: &rp})
				if err != nil {
					t.Errorf("record: %v", err)
					return
				}
				if len(res.Conflicts) > 0 {
					t.Errorf("record: conflicts %v", res.Conflicts)
				}
				rode = res.Claim
			})
			close(start)
			wg.Wait()
			require.NotNil(t, claimed)
			require.NotNil(t, rode)
			inFlight = append(slices.Clone(claimed.Claimed), rode.Claimed...)
			require.LessOrEqual(t, len(inFlight), window, "round %d: two claims took %d messages of a window of %d", round,
				len(inFlight), window)
			require.LessOrEqual(t, e.counts(t, queue)[domain.StatusDLNG], int64(window), "round %d", round)
		}
		e.record(t, nil, deliveredAll(&store.ClaimResult{Claimed: inFlight})...)
		requireConsistent(t, e.testBundle)
	})

	t.Run("AClaimFacingHeldQueuesReturnsWithoutMore", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		const n = 200
		var heads []*domain.Message
		var names []string
		for _, q := range appQueues(n) {
			m := eoioOutbound(q, 1)[0]
			heads, names = append(heads, m), append(names, m.Queue)
		}
		free := outbound(5)
		e.insert(t, append(heads, free...)...)
		p := store.ClaimParams{Node: e.node, Limit: 10, Candidates: store.CandidatesSkip}
		if !e.eng.SerialWrites() {
			// Another transaction holds the rows of the 200 EOIO queues
			// (a send, an operator's bulk action) while the node claims.
			held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
			go func() {
				done <- e.store.Update(e.ctx, func(w store.Writer) error {
					for _, q := range names {
						if _, err := w.Queue(q); err != nil {
							return err
						}
					}
					close(held)
					<-release
					return nil
				})
			}()
			<-held
			res := e.claimAs(t, e.node, p)
			close(release)
			require.NoError(t, <-done)
			require.ElementsMatch(t, idsOf(free...), claimedIDs(res), "what no other transaction holds is claimed")
			require.False(t, res.More, "the heads of held queues are nothing more to claim now: "+
				"the claim must not come back at once to find them held again")
			e.record(t, nil, deliveredAll(res)...)
			free = nil
		}
		res := e.claimAs(t, e.node, p)
		require.Len(t, res.Claimed, 10)
		require.True(t, res.More, "once the rows are free, the claim stops at its limit with more ready")
		rest := e.claimAs(t, e.node, store.ClaimParams{Node: e.node, Limit: 1000, Candidates: store.CandidatesSkip})
		require.Len(t, rest.Claimed, n+len(free)-10)
		requireConsistent(t, e.testBundle)
	})

	t.Run("TwoSwitchesAtOnceTakeTurns", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		for range 5 {
			require.Zero(t, e.switchConcurrently(t, true), "deadlocks broken by the database")
		}
		require.Equal(t, domain.PrefixXBQ, e.eoio(t).Current.Prefix, "ten switches, each after the one before")
	})

	t.Run("SendsOverManyAppQueuesAndRecordsDoNotDeadlock", func(t *testing.T) {
		t.Parallel()
		e := setupEngine(t, open)
		const n, rounds = 200, 3
		queues := appQueues(n)
		var names []string
		for _, q := range queues {
			m := eoioOutbound(q, 1)[0]
			names = append(names, m.Queue)
			e.insert(t, m)
		}
		before := e.deadlocks()
		for round := range rounds {
			claimed := e.claimAs(t, e.node, store.ClaimParams{Node: e.node, Limit: n, Candidates: store.CandidatesSkip})
			require.Len(t, claimed.Claimed, n, "round %d: every queue's head", round)
			var wg sync.WaitGroup
			start := make(chan struct{})
			// A send batch: one message for each app queue, in the
			// order of the app queues, its queues locked ahead as a
			// batch locks them.
			wg.Go(func() {
				<-start
				var batch []*domain.Message
				for _, q := range queues {
					batch = append(batch, eoioOutbound(q, 1)...)
				}
				err := e.store.Update(e.ctx, func(w store.Writer) error {
					if err := store.LockQueues(w, names, nil); err != nil {
						return err
					}
					for _, m := range batch {
						if err := w.Insert(m.Clone(), PayloadOf(m), Entry("received")); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Errorf("send: %v", err)
				}
			})
			// The outcomes of the heads, in batches in the order they
			// were claimed (the turn's, not the names').
			wg.Go(func() {
				<-start
				for chunk := range slices.Chunk(claimed.Claimed, 50) {
					var outcomes []store.Outcome
					for _, c := range chunk {
						outcomes = append(outcomes, delivered(c))
					}
					res, err := e.eng.Record(e.ctx, store.RecordParams{Node: e.node, Outcomes: outcomes})
					if err != nil {
						t.Errorf("record: %v", err)
						return
					}
					if len(res.Conflicts) > 0 {
						t.Errorf("record: conflicts %v", res.Conflicts)
					}
				}
			})
			close(start)
			wg.Wait()
		}
		require.Equal(t, before, e.deadlocks(), "deadlocks broken by the database")
		requireConsistent(t, e.testBundle)
	})
}

// switchConcurrently runs two switches at once, each as the switch
// procedure's transaction does, and returns the deadlocks the store broke
// meanwhile.
func (b *testBundle) switchConcurrently(t *testing.T, lock bool) uint64 {
	t.Helper()
	before := b.deadlocks()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			<-start
			err := b.store.Update(b.ctx, func(w store.Writer) error {
				if lock {
					if err := store.LockSwitch(w); err != nil {
						return err
					}
				}
				sw, err := w.EOIO()
				if err != nil {
					return err
				}
				return w.SetEOIO(domain.EOIOSwitch{Current: domain.EOIOSet{Prefix: sw.Current.Prefix.Other(), Queues: 4},
					Old: sw.Current, At: Now(), By: "test"})
			})
			if err != nil {
				t.Errorf("switch: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	return b.deadlocks() - before
}

// deliveredAll is the delivered outcome of every message a claim took.
func deliveredAll(res *store.ClaimResult) []store.Outcome {
	var out []store.Outcome
	for _, c := range res.Claimed {
		out = append(out, delivered(c))
	}
	return out
}
