package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// ClusterOpener opens two independent handles — as two processes would
// have — on one new, empty store, each of which implements
// store.EngineStore. It closes (and checks) them through t.Cleanup.
type ClusterOpener func(t *testing.T) (store.Store, store.Store)

// RunCluster runs the suite of a store that nodes share (§11): balancing,
// handover, fencing and crash recovery across nodes. Only a store that
// several processes can open runs it: the embedded store cannot.
func RunCluster(t *testing.T, open ClusterOpener) {
	groups := []struct {
		name string
		run  func(*testing.T, ClusterOpener)
	}{
		{"Balance", testBalance},
		{"Fencing", testClusterFencing},
		{"Recovery", testClusterRecovery},
		{"Wakeups", testWakeups},
		{"Outage", testClusterOutage},
		{"Receivers", testClusterReceivers},
		{"ReceiverCodes", testClusterReceiverCodes},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// clusterBundle is a store with two handles.
type clusterBundle struct {
	*testBundle
	a, b store.EngineStore
}

func setupCluster(t *testing.T, open ClusterOpener) *clusterBundle {
	t.Helper()
	a, b := open(t)
	ea, ok := a.(store.EngineStore)
	require.True(t, ok, "%T does not implement store.EngineStore", a)
	eb, ok := b.(store.EngineStore)
	require.True(t, ok, "%T does not implement store.EngineStore", b)
	return &clusterBundle{testBundle: &testBundle{ctx: t.Context(), store: a}, a: ea, b: eb}
}

// liveTTL is the TTL of nodes that must not expire during a test.
const liveTTL = time.Hour

// testHeartbeat is the heartbeat interval the tests' nodes join with: a
// node that joins under the id of one that looks alive watches it for a
// few of its heartbeats before it takes its place.
const testHeartbeat = 10 * time.Millisecond

func (c *clusterBundle) join(t *testing.T, eng store.EngineStore, id string) store.Node {
	t.Helper()
	j, err := eng.Join(c.ctx, store.JoinParams{ID: id, TTL: liveTTL, Heartbeat: testHeartbeat, Receivers: Receivers})
	require.NoError(t, err)
	return j.Node
}

func (c *clusterBundle) heartbeat(t *testing.T, eng store.EngineStore, n store.Node) *store.HeartbeatResult {
	t.Helper()
	res, err := eng.Heartbeat(c.ctx, store.HeartbeatParams{Node: n, TTL: liveTTL})
	require.NoError(t, err)
	return res
}

func (c *clusterBundle) claim(t *testing.T, eng store.EngineStore, n store.Node, mode store.CandidateMode) *store.ClaimResult {
	t.Helper()
	res, err := eng.Claim(c.ctx, store.ClaimParams{Node: n, Limit: 100, Window: 32, Candidates: mode, Receivers: Receivers})
	require.NoError(t, err)
	return res
}

// spread inserts one outbound EO message in each of n queues.
func (c *clusterBundle) spread(t *testing.T, n int) []*domain.Message {
	t.Helper()
	var msgs []*domain.Message
	for i, m := range outbound(n) {
		msgs = append(msgs, InQueue(m, domain.EOOutboundQueue(domain.Code4(ReceiverWMS), 100, i)))
	}
	c.insert(t, msgs...)
	return msgs
}

// expire makes node n's heartbeat expire: it heartbeats with a TTL of a
// millisecond, and the test waits until the store's clock passed it.
func (c *clusterBundle) expire(t *testing.T, eng store.EngineStore, n store.Node) {
	t.Helper()
	_, err := eng.Heartbeat(c.ctx, store.HeartbeatParams{Node: n, TTL: time.Millisecond})
	require.NoError(t, err)
	at, err := eng.Now(c.ctx)
	require.NoError(t, err)
	for {
		now, err := eng.Now(c.ctx)
		require.NoError(t, err)
		if now.After(at.Add(time.Millisecond)) {
			return
		}
	}
}

// outage makes the heartbeats of several nodes expire together, as an
// outage of the database would: each heartbeats with a TTL long enough for
// none to see another expire, and the test waits until the store's clock
// passed them all.
func (c *clusterBundle) outage(t *testing.T, nodes map[store.EngineStore]store.Node) {
	t.Helper()
	const ttl = 500 * time.Millisecond
	var last time.Time
	for eng, n := range nodes {
		_, err := eng.Heartbeat(c.ctx, store.HeartbeatParams{Node: n, TTL: ttl})
		require.NoError(t, err)
		if last, err = eng.Now(c.ctx); err != nil {
			t.Fatal(err)
		}
	}
	for {
		now, err := c.a.Now(c.ctx)
		require.NoError(t, err)
		if now.After(last.Add(ttl)) {
			return
		}
	}
}

func testBalance(t *testing.T, open ClusterOpener) {
	t.Run("TwoNodesShareTheQueuesEachHeldOnce", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na, nb := c.join(t, c.a, "A"), c.join(t, c.b, "B")
		msgs := c.spread(t, 6)
		ha := c.heartbeat(t, c.a, na)
		hb := c.heartbeat(t, c.b, nb)
		require.Equal(t, 3, ha.Queues, "the fair share: ceil(6 queues / 2 nodes)")
		require.Equal(t, 3, hb.Queues)
		ca, cb := c.claim(t, c.a, na, store.CandidatesAsAny), c.claim(t, c.b, nb, store.CandidatesAsAny)
		require.Len(t, ca.Claimed, 3, "a node delivers only the queues it holds")
		require.Len(t, cb.Claimed, 3)
		require.ElementsMatch(t, idsOf(msgs...), append(claimedIDs(ca), claimedIDs(cb)...), "each queue has exactly one holder")
	})

	t.Run("AThirdNodeTakesItsShareAndNoMessageGoesTwice", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na, nb := c.join(t, c.a, "A"), c.join(t, c.b, "B")
		msgs := c.spread(t, 6)
		c.heartbeat(t, c.a, na)
		c.heartbeat(t, c.b, nb)
		// A has a message in flight when C joins: that queue stays
		// A's until the outcome is recorded.
		inFlight, err := c.a.Claim(c.ctx, store.ClaimParams{Node: na, Limit: 1, Window: 32, Receivers: Receivers})
		require.NoError(t, err)
		require.Len(t, inFlight.Claimed, 1)
		nc := c.join(t, c.b, "C")
		require.Equal(t, 2, c.heartbeat(t, c.a, na).Queues, "over its share, A gives up a queue")
		require.Equal(t, 2, c.heartbeat(t, c.b, nb).Queues)
		require.Equal(t, 2, c.heartbeat(t, c.b, nc).Queues, "C takes the queues given up")
		seen := map[string]int{}
		for _, cl := range []struct {
			eng store.EngineStore
			n   store.Node
		}{{c.a, na}, {c.b, nb}, {c.b, nc}} {
			for _, id := range claimedIDs(c.claim(t, cl.eng, cl.n, store.CandidatesAsAny)) {
				seen[id]++
			}
		}
		seen[inFlight.Claimed[0].Message.ID]++
		require.Len(t, seen, len(msgs))
		for id, n := range seen {
			require.Equal(t, 1, n, "message %s is delivered once", id)
		}
		rec, err := c.a.Record(c.ctx, store.RecordParams{Node: na, Outcomes: []store.Outcome{delivered(inFlight.Claimed[0])}})
		require.NoError(t, err)
		require.Empty(t, rec.Conflicts, "A kept the queue of its message in flight: its outcome applies")
		requireConsistent(t, c.testBundle)
	})

	t.Run("LeaveHandsTheQueuesOverAtOnce", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na, nb := c.join(t, c.a, "A"), c.join(t, c.b, "B")
		msgs := c.spread(t, 4)
		c.heartbeat(t, c.a, na)
		c.heartbeat(t, c.b, nb)
		require.NoError(t, c.a.Leave(c.ctx, na))
		require.ElementsMatch(t, idsOf(msgs...), claimedIDs(c.claim(t, c.b, nb, store.CandidatesAsAny)),
			"the node that stays takes the queues of the one that left at its next claim")
		_, err := c.a.Heartbeat(c.ctx, store.HeartbeatParams{Node: na, TTL: liveTTL})
		require.ErrorIs(t, err, store.ErrFenced, "a node that left is gone")
	})

	t.Run("ANewQueueIsTakenByTheNextClaim", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na, nb := c.join(t, c.a, "A"), c.join(t, c.b, "B")
		first := c.spread(t, 1)
		got := append(claimedIDs(c.claim(t, c.a, na, store.CandidatesAsAny)), claimedIDs(c.claim(t, c.b, nb, store.CandidatesAsAny))...)
		require.Equal(t, idsOf(first...), got, "no heartbeat needed: a node below its share takes a free queue")
	})
}

func testClusterFencing(t *testing.T, open ClusterOpener) {
	t.Run("AnExpiredNodeChangesNothingAndItsQueuesMoveOn", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na := c.join(t, c.a, "A")
		m := c.spread(t, 1)[0]
		res := c.claim(t, c.a, na, store.CandidatesAsAny)
		require.Len(t, res.Claimed, 1)
		nb := c.join(t, c.b, "B")
		c.expire(t, c.a, na)

		_, err := c.a.Record(c.ctx, store.RecordParams{Node: na, Outcomes: []store.Outcome{delivered(res.Claimed[0])}})
		require.ErrorIs(t, err, store.ErrOverdue, "a node whose heartbeat is overdue changes nothing")
		require.Equal(t, domain.StatusDLNG, c.message(t, m.ID).Status, "its outcome changed nothing")

		hb := c.heartbeat(t, c.b, nb)
		require.Equal(t, []store.Node{na}, hb.Dead, "a live node's heartbeat declares the overdue node dead")
		require.Equal(t, 1, hb.Queues, "and takes its queue over")
		_, err = c.a.Heartbeat(c.ctx, store.HeartbeatParams{Node: na, TTL: liveTTL})
		require.ErrorIs(t, err, store.ErrFenced, "a dead node's heartbeat tells it its incarnation is over")
		_, err = c.a.Claim(c.ctx, store.ClaimParams{Node: na, Limit: 1, Window: 1, Receivers: Receivers})
		require.ErrorIs(t, err, store.ErrFenced)
		_, err = c.a.Record(c.ctx, store.RecordParams{Node: na, Outcomes: []store.Outcome{delivered(res.Claimed[0])}})
		require.ErrorIs(t, err, store.ErrFenced)
		require.Empty(t, c.claim(t, c.b, nb, store.CandidatesAsAny).Claimed, "the dead node's message is DLNG until recovery")
		rec, err := c.b.Recover(c.ctx, store.RecoverParams{Node: nb, Dead: na, Blacklisting: true, Crashes: 2})
		require.NoError(t, err)
		require.Equal(t, []string{m.ID}, idsOf(rec.Requeued...))
		again := c.claim(t, c.b, nb, store.CandidatesAlone)
		require.Equal(t, []string{m.ID}, claimedIDs(again), "after recovery the new holder delivers it")
		require.Greater(t, again.Claimed[0].Epoch, res.Claimed[0].Epoch, "under a new epoch")
		require.Empty(t, c.heartbeat(t, c.b, nb).Dead, "a recovered node is not dead any more")
		requireConsistent(t, c.testBundle)
	})
}

func testClusterRecovery(t *testing.T, open ClusterOpener) {
	t.Run("TwoNodesRaceToRecoverOneDeadNode", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		dead := c.join(t, c.a, "A")
		m := c.spread(t, 1)[0]
		require.Len(t, c.claim(t, c.a, dead, store.CandidatesAsAny).Claimed, 1)
		nb, nc := c.join(t, c.a, "B"), c.join(t, c.b, "C")
		c.expire(t, c.a, dead)

		var wg sync.WaitGroup
		results := make([]*store.RecoverResult, 2)
		errs := make([]error, 2)
		for i, r := range []struct {
			eng store.EngineStore
			n   store.Node
		}{{c.a, nb}, {c.b, nc}} {
			wg.Go(func() {
				results[i], errs[i] = r.eng.Recover(context.WithoutCancel(c.ctx),
					store.RecoverParams{Node: r.n, Dead: dead, Blacklisting: true, Crashes: 2})
			})
		}
		wg.Wait()
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.Equal(t, 1, len(results[0].Requeued)+len(results[1].Requeued), "one of them recovers; the other finds nothing")
		got := c.message(t, m.ID)
		require.Equal(t, 1, got.Crashes, "crashes += 1, once")
		require.Equal(t, domain.StatusTBDL, got.Status)
		requireConsistent(t, c.testBundle)
	})

	t.Run("ARestartedNodesPredecessorIsDead", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		old := c.join(t, c.a, "A")
		c.spread(t, 2)
		require.Len(t, c.claim(t, c.a, old, store.CandidatesAsAny).Claimed, 2)
		j, err := c.b.Join(c.ctx, store.JoinParams{ID: "A", TTL: liveTTL, Heartbeat: testHeartbeat, Receivers: Receivers})
		require.NoError(t, err)
		require.Equal(t, []store.Node{old}, j.Dead)
		rec, err := c.b.Recover(c.ctx, store.RecoverParams{Node: j.Node, Dead: old, Blacklisting: true, Crashes: 2})
		require.NoError(t, err)
		require.Len(t, rec.Requeued, 2)
		require.Empty(t, rec.Blacklisted, "two were in flight: neither is blamed")
		require.Len(t, c.claim(t, c.b, j.Node, store.CandidatesAsAny).Claimed, 2, "the new incarnation holds the queues")
	})
}

func testWakeups(t *testing.T, open ClusterOpener) {
	t.Run("ASendOnOneHandleWakesTheOther", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		wake := c.b.Wakeups()
		// The listener says it listens with a first wakeup.
		select {
		case <-wake:
		case <-c.ctx.Done():
			t.Fatal(c.ctx.Err())
		}
		c.spread(t, 1)
		select {
		case <-wake:
		case <-c.ctx.Done():
			t.Fatal(c.ctx.Err())
		}
	})
}

// testClusterOutage holds the cases of §11's outages: a node whose
// heartbeat lapsed but whose queues nobody took goes on with what it
// holds; a recovery that follows an outage its own node suffered counts no
// crash; and two live processes never share a node id.
func testClusterOutage(t *testing.T, open ClusterOpener) {
	t.Run("AnOverdueNodeRevivesWhenNobodyTookItOver", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		na := c.join(t, c.a, "A")
		m := c.spread(t, 1)[0]
		res := c.claim(t, c.a, na, store.CandidatesAsAny)
		require.Len(t, res.Claimed, 1)
		c.expire(t, c.a, na)

		_, err := c.a.Record(c.ctx, store.RecordParams{Node: na, Outcomes: []store.Outcome{delivered(res.Claimed[0])}})
		require.ErrorIs(t, err, store.ErrOverdue)
		hb := c.heartbeat(t, c.a, na)
		require.True(t, hb.Revived, "the heartbeat after the outage revives the node")
		require.Equal(t, 1, hb.Queues, "with its queue")
		out, err := c.a.Record(c.ctx, store.RecordParams{Node: na, Outcomes: []store.Outcome{delivered(res.Claimed[0])}})
		require.NoError(t, err)
		require.Empty(t, out.Conflicts, "what it kept through the outage is recorded")
		require.Equal(t, domain.StatusDLVD, c.message(t, m.ID).Status)
		require.False(t, c.heartbeat(t, c.a, na).Revived, "a heartbeat in time revives nothing")
	})

	t.Run("RecoveryAfterAnOutageTheRecovererSufferedCountsNoCrash", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		// Nodes that heartbeat every second: an outage catches their last
		// heartbeats within a second or two of each other.
		join := func(eng store.EngineStore, id string) store.Node {
			j, err := eng.Join(c.ctx, store.JoinParams{ID: id, TTL: liveTTL, Heartbeat: time.Second, Receivers: Receivers})
			require.NoError(t, err)
			return j.Node
		}
		na, nb := join(c.a, "A"), join(c.b, "B")
		m := c.spread(t, 1)[0]
		res := c.claim(t, c.a, na, store.CandidatesAsAny)
		if len(res.Claimed) == 0 {
			res = c.claim(t, c.b, nb, store.CandidatesAsAny)
			na, nb = nb, na
			c.a, c.b = c.b, c.a
		}
		require.Len(t, res.Claimed, 1)
		// The database is gone for longer than the TTL: both nodes miss
		// their heartbeats. B comes back first.
		c.outage(t, map[store.EngineStore]store.Node{c.a: na, c.b: nb})
		hb := c.heartbeat(t, c.b, nb)
		require.True(t, hb.Revived)
		require.Empty(t, hb.Dead, "a node that lapsed while B was gone too gets a TTL to come back")

		rec, err := c.b.Recover(c.ctx, store.RecoverParams{Node: nb, Dead: na, Blacklisting: true, Crashes: 1})
		require.NoError(t, err)
		require.Empty(t, rec.Requeued, "B missed its heartbeats in the same window: no crash is counted")
		require.Empty(t, rec.Blacklisted, "not even at a threshold of one crash")
		require.Equal(t, []string{m.ID}, idsOf(rec.HandedBack...))
		got := c.message(t, m.ID)
		require.Equal(t, domain.StatusTBDL, got.Status)
		require.Zero(t, got.Crashes)
		_, err = c.a.Heartbeat(c.ctx, store.HeartbeatParams{Node: na, TTL: liveTTL})
		require.ErrorIs(t, err, store.ErrFenced, "a recovered node does not revive")
		requireConsistent(t, c.testBundle)
	})

	t.Run("ANodeThatJoinsAgainRecoversItsOldIncarnationWithoutCounting", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		old := c.join(t, c.a, "A")
		m := c.spread(t, 1)[0]
		require.Len(t, c.claim(t, c.a, old, store.CandidatesAsAny).Claimed, 1)
		nb := c.join(t, c.b, "B")
		c.expire(t, c.a, old)
		require.Equal(t, []store.Node{old}, c.heartbeat(t, c.b, nb).Dead, "B takes A over")
		_, err := c.a.Heartbeat(c.ctx, store.HeartbeatParams{Node: old, TTL: liveTTL})
		require.ErrorIs(t, err, store.ErrFenced)

		// A's process lives: it joins again, and recovers its old
		// incarnation before B does.
		j, err := c.a.Join(c.ctx, store.JoinParams{ID: "A", TTL: liveTTL, Heartbeat: testHeartbeat, Receivers: Receivers})
		require.NoError(t, err)
		require.Contains(t, j.Dead, old)
		rec, err := c.a.Recover(c.ctx, store.RecoverParams{Node: j.Node, Dead: old, Blacklisting: true, Crashes: 1,
			Outage: true})
		require.NoError(t, err)
		require.Equal(t, []string{m.ID}, idsOf(rec.HandedBack...))
		require.Zero(t, c.message(t, m.ID).Crashes, "the process did not die")
		requireConsistent(t, c.testBundle)
	})

	t.Run("ASecondLiveProcessWithTheSameIDIsRefused", func(t *testing.T) {
		t.Parallel()
		c := setupCluster(t, open)
		const every = 20 * time.Millisecond
		first, err := c.a.Join(c.ctx, store.JoinParams{ID: "A", Address: "10.0.0.1:7870", TTL: liveTTL, Heartbeat: every, Receivers: Receivers})
		require.NoError(t, err)
		// The first process heartbeats, as its engine does.
		stop := make(chan struct{})
		beating := make(chan struct{})
		go func() {
			defer close(beating)
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.a.Heartbeat(context.WithoutCancel(c.ctx), store.HeartbeatParams{Node: first.Node, TTL: liveTTL}); err != nil {
						return
					}
				}
			}
		}()
		_, err = c.b.Join(c.ctx, store.JoinParams{ID: "A", Address: "10.0.0.2:7870", TTL: liveTTL, Heartbeat: every, Receivers: Receivers})
		close(stop)
		<-beating
		require.ErrorIs(t, err, domain.ErrInvalid)
		require.Contains(t, err.Error(), "10.0.0.1:7870", "the refusal names the live process's address")
		require.Empty(t, c.heartbeat(t, c.a, first.Node).Dead, "the live process goes on, untouched")

		// Once it heartbeats no more (it was killed), a restart takes its place.
		second, err := c.b.Join(c.ctx, store.JoinParams{ID: "A", Address: "10.0.0.2:7870", TTL: liveTTL, Heartbeat: every, Receivers: Receivers})
		require.NoError(t, err)
		require.Equal(t, []store.Node{first.Node}, second.Dead)
		_, err = c.a.Heartbeat(c.ctx, store.HeartbeatParams{Node: first.Node, TTL: liveTTL})
		require.ErrorIs(t, err, store.ErrFenced, "the superseded incarnation is over")
	})
}
