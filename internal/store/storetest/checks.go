package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// CheckRig is what the suite of store.CheckStore works with: a store and
// how its nodes come to be and to hold queues. RunEngine builds it from
// store.EngineStore (Join, Heartbeat); a store whose cluster is built
// apart may build it by other means.
type CheckRig struct {
	Store  store.Store
	Checks store.CheckStore
	// Join starts a new incarnation of node id; an older incarnation of
	// the id is fenced: it holds no queue any more.
	Join func(t *testing.T, id string) store.Node
	// Hold makes node n hold the queues that exist now and have no live
	// holder.
	Hold func(t *testing.T, n store.Node)
}

// RunChecks runs the suite of store.CheckStore, the check-back of
// transactional sends (§9), against the rigs open returns.
func RunChecks(t *testing.T, open func(t *testing.T) *CheckRig) {
	testChecks(t, open)
}

// engineRig is the CheckRig of an engine store: nodes join, and a
// heartbeat takes the queues nobody holds.
func engineRig(open Opener) func(t *testing.T) *CheckRig {
	return func(t *testing.T) *CheckRig {
		st := open(t)
		eng, ok := st.(store.EngineStore)
		require.True(t, ok, "%T does not implement store.EngineStore", st)
		return &CheckRig{
			Store: st, Checks: eng,
			Join: func(t *testing.T, id string) store.Node {
				j, err := eng.Join(t.Context(), store.JoinParams{ID: id, TTL: time.Hour, Heartbeat: testHeartbeat, Receivers: Receivers})
				require.NoError(t, err)
				return j.Node
			},
			Hold: func(t *testing.T, n store.Node) {
				_, err := eng.Heartbeat(t.Context(), store.HeartbeatParams{Node: n, TTL: time.Minute})
				if !errors.Is(err, store.ErrFenced) { // a fenced node holds nothing
					require.NoError(t, err)
				}
			},
		}
	}
}

// checkBundle is a rig with node N1 joined.
type checkBundle struct {
	*testBundle
	rig  *CheckRig
	eng  store.CheckStore
	node store.Node
}

func setupChecks(t *testing.T, open func(t *testing.T) *CheckRig) *checkBundle {
	t.Helper()
	rig := open(t)
	e := &checkBundle{testBundle: &testBundle{ctx: t.Context(), store: rig.Store}, rig: rig, eng: rig.Checks}
	e.node = rig.Join(t, "N1")
	return e
}

// insert stores messages and lets the node hold their queues.
func (e *checkBundle) insert(t *testing.T, msgs ...*domain.Message) {
	t.Helper()
	e.testBundle.insert(t, msgs...)
	e.rig.Hold(t, e.node)
}

// testChecks specifies store.CheckStore: the claims and outcomes of the
// check-back of transactional sends (§9).
func testChecks(t *testing.T, open func(t *testing.T) *CheckRig) {
	t.Run("ClaimMarksWhatIsDue", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		old, young, sent := Prepared(NewMessage()), Prepared(NewMessage()), NewMessage()
		old.CreatedAt = Now().Add(-2 * time.Hour)
		stuck := Prepared(NewMessage())
		stuck.CreatedAt = old.CreatedAt
		e.insert(t, old, young, sent, stuck)
		e.markChecked(t, stuck.ID, func(m *domain.Message) { m.Stuck = true })
		before := Now()

		res := e.claimChecks(t, time.Hour, time.Hour, 10)
		require.Equal(t, idsOf(old), idsOf(res.Claimed...), "prepared over an hour ago; stuck and TBDL messages are not checked")
		c := res.Claimed[0]
		require.NotNil(t, c.LastCheckAt)
		requireRecent(t, *c.LastCheckAt, before)
		require.Equal(t, c, e.message(t, old.ID), "the claim is stored")
		require.Len(t, e.history(t, old.ID), 1, "a claim writes no history: the check's outcome does")
		require.Zero(t, c.Checks, "a claim does not count: the outcome does")
		require.Equal(t, young.CreatedAt.Add(time.Hour), res.NextDue, "the young one is due an hour after it was prepared")
		require.False(t, res.More)

		again := e.claimChecks(t, time.Hour, time.Hour, 10)
		require.Empty(t, again.Claimed, "not again within the interval")
		require.Equal(t, young.CreatedAt.Add(time.Hour), again.NextDue)
		later := e.claimChecks(t, 3*time.Hour, 30*time.Minute, 10)
		require.Empty(t, later.Claimed)
		require.Equal(t, c.LastCheckAt.Add(30*time.Minute), later.NextDue, "the claimed one is due an interval after its check")
		requireConsistent(t, e.testBundle)
	})

	t.Run("ClaimStopsAtItsLimit", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		var msgs []*domain.Message
		for range 3 {
			msgs = append(msgs, Prepared(NewMessage()))
		}
		e.insert(t, msgs...)
		first := e.claimChecks(t, 0, time.Hour, 2)
		require.Len(t, first.Claimed, 2)
		require.True(t, first.More)
		second := e.claimChecks(t, 0, time.Hour, 2)
		require.Len(t, second.Claimed, 1)
		require.False(t, second.More)
		require.ElementsMatch(t, idsOf(msgs...), idsOf(append(first.Claimed, second.Claimed...)...), "each once")
	})

	t.Run("RecordAppliesABatch", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		commit, rollback, unknown, raced := Prepared(NewEOIOMessage("ORDERS")), Prepared(NewMessage()),
			Prepared(NewMessage()), Prepared(NewMessage())
		e.insert(t, commit, rollback, unknown, raced)
		claimed := e.claimChecks(t, 0, time.Hour, 10)
		require.Len(t, claimed.Claimed, 4)
		at := map[string]time.Time{}
		for _, m := range claimed.Claimed {
			at[m.ID] = *m.LastCheckAt
		}
		// The producer of raced commits it while the check is under way.
		e.update(t, func(w store.Writer) error {
			_, err := store.CommitPrepared(w, router.Placer, raced.ID, Entry("tx.commit by producer"), nil)
			return err
		})
		outcome := func(m *domain.Message, k store.CheckKind, answer string) store.CheckOutcome {
			return store.CheckOutcome{ID: m.ID, CheckedAt: at[m.ID], Kind: k, Answer: answer, Detail: "POST http://erp/check"}
		}
		res, err := e.eng.RecordChecks(e.ctx, store.RecordChecksParams{Node: e.node, MaxChecks: 10, Outcomes: []store.CheckOutcome{
			outcome(commit, store.CheckCommit, "commit"), outcome(rollback, store.CheckRollback, "rollback"),
			outcome(unknown, store.CheckUnanswered, "unknown"), outcome(raced, store.CheckRollback, "rollback"),
		}})
		require.NoError(t, err)
		require.Len(t, res.Applied, 4)
		require.Equal(t, domain.StatusTBDL, res.Applied[0].Status)
		require.Equal(t, uint64(1), res.Applied[0].Seq, "seq assigned at the check-back's commit")
		require.Equal(t, rollback.ID, res.Applied[1].ID)
		require.Equal(t, domain.StatusPEND, res.Applied[2].Status)
		require.Equal(t, 1, res.Applied[2].Checks)
		require.Equal(t, "unknown", res.Applied[2].LastAnswer)
		require.Nil(t, res.Applied[3], "the producer's commit won")
		require.ErrorIs(t, res.Conflicts[raced.ID], domain.ErrConflict)
		require.Len(t, res.Conflicts, 1)

		require.Equal(t, domain.StatusTBDL, e.message(t, commit.ID).Status)
		require.NotContains(t, e.ids(t, store.MessageFilter{}), rollback.ID, "rolled back: deleted")
		require.Equal(t, res.Applied[2], e.message(t, unknown.ID))
		require.Equal(t, domain.StatusTBDL, e.message(t, raced.ID).Status)
		requireConsistent(t, e.testBundle)
	})

	t.Run("AProducerCommitRacesTheCheckBackCommit", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		var msgs []*domain.Message
		for range 16 {
			msgs = append(msgs, Prepared(NewEOIOMessage("ORDERS")))
		}
		e.insert(t, msgs...)
		claimed := e.claimChecks(t, 0, time.Hour, len(msgs))
		require.Len(t, claimed.Claimed, len(msgs))
		var wg sync.WaitGroup
		producer := make([]error, len(msgs))
		engine := make([]*store.RecordChecksResult, len(msgs))
		engineErr := make([]error, len(msgs))
		for i, m := range claimed.Claimed {
			wg.Go(func() {
				producer[i] = e.store.Update(e.ctx, func(w store.Writer) error {
					_, err := store.CommitPrepared(w, router.Placer, m.ID, Entry("tx.commit by producer"), nil)
					return err
				})
			})
			wg.Go(func() {
				engine[i], engineErr[i] = e.eng.RecordChecks(e.ctx, store.RecordChecksParams{Node: e.node, MaxChecks: 10,
					Outcomes: []store.CheckOutcome{{ID: m.ID, CheckedAt: *m.LastCheckAt, Kind: store.CheckCommit, Answer: "commit"}}})
			})
		}
		wg.Wait()
		for i, m := range claimed.Claimed {
			require.NoError(t, engineErr[i])
			engineWon := engine[i].Applied[0] != nil
			if engineWon {
				require.ErrorIs(t, producer[i], domain.ErrConflict, "message %s: the check-back won, the producer gets a conflict", m.ID)
			} else {
				require.NoError(t, producer[i], "message %s", m.ID)
				require.ErrorIs(t, engine[i].Conflicts[m.ID], domain.ErrConflict, "message %s: the producer won", m.ID)
			}
			commits := 0
			for _, h := range e.history(t, m.ID) {
				if h.From == domain.StatusPEND && h.To == domain.StatusTBDL {
					commits++
				}
			}
			require.Equal(t, 1, commits, "message %s is committed once", m.ID)
		}
		requireConsistent(t, e.testBundle)
	})

	t.Run("TwoNodesCheckEachMessageOncePerInterval", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		other := e.rig.Join(t, "N2")
		// Four queues: the first node takes two, the second the others.
		var msgs []*domain.Message
		for i := range 40 {
			m := Prepared(NewMessage())
			switch {
			case i%2 == 1 && i < 20:
				m = Prepared(NewEOIOMessage("ORDERS"))
			case i%2 == 1:
				m = Prepared(NewEOIOMessage("INVOICES"))
			case i >= 20:
				m = InQueue(m, domain.EOInboundQueue(domain.RoleCentral, 1))
			}
			msgs = append(msgs, m)
		}
		e.insert(t, msgs[:20]...)
		e.testBundle.insert(t, msgs[20:]...)
		e.rig.Hold(t, other)
		// Both nodes claim at once, a few at a time, until neither finds
		// more; a node that is fenced (the embedded store has one process,
		// the last to join) finds nothing.
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for _, n := range []store.Node{e.node, other, e.node, other} {
			wg.Go(func() {
				for {
					res, err := e.eng.ClaimChecks(e.ctx, store.ClaimChecksParams{Node: n, After: 0, Interval: time.Hour, Limit: 3})
					if errors.Is(err, store.ErrFenced) || err == nil && len(res.Claimed) == 0 {
						return
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					for _, m := range res.Claimed {
						seen[m.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NotEmpty(t, seen)
		for id, n := range seen {
			require.Equal(t, 1, n, "message %s is checked once per interval", id)
		}
		for _, n := range []store.Node{e.node, other} {
			res, err := e.eng.ClaimChecks(e.ctx, store.ClaimChecksParams{Node: n, After: 0, Interval: time.Hour, Limit: 100})
			if err == nil {
				require.Empty(t, res.Claimed, "not again within the interval")
			}
		}
	})

	t.Run("AnOldIncarnationChecksNothing", func(t *testing.T) {
		t.Parallel()
		e := setupChecks(t, open)
		p := Prepared(NewMessage())
		e.insert(t, p)
		claimed := e.claimChecks(t, 0, 0, 1)
		require.Len(t, claimed.Claimed, 1)
		old := e.node
		e.node = e.rig.Join(t, "N1")

		res, err := e.eng.ClaimChecks(e.ctx, store.ClaimChecksParams{Node: old, Limit: 1})
		if err == nil {
			require.Empty(t, res.Claimed, "a fenced node holds no queue to check")
		} else {
			require.ErrorIs(t, err, store.ErrFenced)
		}
		rec, err := e.eng.RecordChecks(e.ctx, store.RecordChecksParams{Node: old, MaxChecks: 10, Outcomes: []store.CheckOutcome{
			{ID: p.ID, CheckedAt: *claimed.Claimed[0].LastCheckAt, Kind: store.CheckRollback, Answer: "rollback"}}})
		if err == nil {
			require.ErrorIs(t, rec.Conflicts[p.ID], store.ErrFenced)
		} else {
			require.ErrorIs(t, err, store.ErrFenced)
		}
		require.Equal(t, domain.StatusPEND, e.message(t, p.ID).Status, "a fenced node changes nothing")
	})
}

// claimChecks claims check-backs for the bundle's node, which must succeed.
func (e *checkBundle) claimChecks(t *testing.T, after, interval time.Duration, limit int) *store.ClaimChecksResult {
	t.Helper()
	res, err := e.eng.ClaimChecks(e.ctx, store.ClaimChecksParams{Node: e.node, After: after, Interval: interval, Limit: limit})
	require.NoError(t, err)
	return res
}
