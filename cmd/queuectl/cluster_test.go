//go:build unix

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// TestClusterKilledNodeQueuesMove kills one of three nodes under load (EO
// and EOIO over several app queues), together with its receivers: another
// node delivers the dead node's queues within cluster.lease_ttl + 2s of the
// kill, every message ends DLVD, EOIO order holds per receiver and app
// queue, and only messages that were DLNG on the dead node (crashes 1) reach
// the receiver twice.
func TestClusterKilledNodeQueuesMove(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{workers: 4, crashes: 2, shutdownTimeout: 10 * time.Second})
	msgs := mixedLoad(360, 8)
	c.send(msgs)
	expected := expectedKeys(msgs)
	nodes := []*node{c.start("n1"), c.start("n2"), c.start("n3")}

	// Once the three nodes run and the receiver got a tenth of the
	// messages, kill the node whose queues have the most work left.
	var victim *node
	var victimQueues []string
	var killedAt time.Time
	c.waiting = "three nodes running and a tenth of the messages delivered"
	for victim == nil {
		d := c.next().report
		if d == nil || !d.done || !c.running() || len(c.ledger.ids) < len(expected)/10 {
			continue
		}
		victim, victimQueues = c.busiest(nodes)
		killedAt = c.kill(victim)
		t.Logf("killed %s, which owned %d queues with work left: %v", victim.id, len(victimQueues), victimQueues)
	}
	c.waiting = "every message delivered"
	for {
		if h := c.next(); h.changed && c.settled() {
			break
		}
	}
	c.stopAll()

	hs := c.histories()
	queueOf := map[string]string{}
	outbound := map[string]bool{}
	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.False(t, m.Blacklisted, "message %s", m.ID)
		require.LessOrEqual(t, m.Crashes, 1, "message %s: one node died", m.ID)
		if m.Stage != domain.Outbound {
			continue
		}
		k := c.keyOf(m)
		require.False(t, outbound[k], "%s was routed twice", k)
		outbound[k] = true
		queueOf[m.ID] = m.Queue
		require.True(t, c.ledger.ids[m.ID], "%s (%s) is DLVD, but the receiver never finished it", m.ID, k)
		if c.ledger.times[k] > 1 {
			require.Equal(t, 1, m.Crashes, "%s reached the receiver %d times, but was not DLNG on the dead node", k, c.ledger.times[k])
		}
		if m.Crashes == 1 {
			require.Equal(t, []string{victim.id}, crashedOn(hs[m.ID]), "%s has crashes 1: it was DLNG on the dead node; history %v", k, hs[m.ID])
		}
	}
	require.Len(t, outbound, len(expected))
	for k := range expected {
		require.Positive(t, c.ledger.times[k], "the receiver never got %s", k)
	}
	c.requireFirstCompletionsInOrder(msgs)
	requireOneDLVD(t, hs)

	// Failover: the first delivery, by a live node, of a queue the dead
	// node owned with work left. A receiver the dead node started as it
	// was killed may report after the kill, orphaned: its parent is no
	// node any more.
	var first *delivery
	for _, d := range c.ledger.starts {
		if d.at.After(killedAt) && c.nodeOf(d) != nil && d.serve != victim.pid && slices.Contains(victimQueues, queueOf[d.id]) {
			first = &d
			break
		}
	}
	require.NotNil(t, first, "no live node delivered the queues of the dead node %v", victimQueues)
	failover := first.at.Sub(killedAt)
	t.Logf("failover: %s after the kill, node %s delivered %s of queue %s (lease_ttl %s)",
		failover.Round(time.Millisecond), c.nodeOf(*first).id, first.key(), queueOf[first.id], clusterLeaseTTL)
	require.LessOrEqual(t, c.recoveries(victim.id), 1, "the dead node was recovered more than once")
}

// TestClusterPausedNodeIsFenced pauses a node (SIGSTOP) past its lease
// while it has deliveries in flight, lets the other node take its queues
// and redeliver them, lets the paused node's receivers finish, and resumes
// it (SIGCONT): the messages it had in flight are recorded DLVD once, by
// the new owner; the paused node records nothing for them, and takes back,
// when it joins again, the crashes the new owner's recovery counted.
func TestClusterPausedNodeIsFenced(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{hold: true, workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second})
	var msgs []sendLine
	for i := range 96 {
		msgs = append(msgs, sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS",
			AppQueue: fmt.Sprintf("P%02d", i%12), Payload: fmt.Sprintf("p%03d", i)})
	}
	c.send(msgs)
	expected := expectedKeys(msgs)
	c.start("n1")
	c.start("n2")

	// Every delivery is held until both nodes run and one of them has two
	// in flight: that one is paused, the other goes on.
	var p, o *node
	c.waiting = "a node with two deliveries in flight"
	for p == nil {
		c.next()
		for i, n := range c.nodes {
			if c.running() && len(n.inFlight) >= 2 {
				p, o = n, c.nodes[1-i]
			}
		}
	}
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGSTOP))
	pausedAt := time.Now()
	t.Cleanup(func() { _ = syscall.Kill(p.pid, syscall.SIGCONT) })
	for _, d := range o.inFlight {
		c.release(d)
	}

	// o takes p's queues over and redelivers what p had in flight (p,
	// paused, starts nothing): it holds those redeliveries.
	paused := func(d delivery) bool { _, ok := p.inFlight[d.key()]; return ok }
	var redelivered *delivery
	c.waiting = "the other node to redeliver what the paused one had in flight"
	for redelivered == nil {
		d := c.next().report
		switch {
		case d == nil || d.done:
		case d.serve == o.pid && paused(*d):
			redelivered = d
		default:
			c.release(*d)
		}
	}
	t.Logf("takeover: %s after the pause of %s, %s redelivered %s",
		redelivered.at.Sub(pausedAt).Round(time.Millisecond), p.id, o.id, redelivered.key())
	held := maps.Clone(p.inFlight)

	// p's receivers end their deliveries while p is paused; then p goes on.
	for _, d := range held {
		c.release(d)
	}
	c.waiting = "the paused node's receivers to finish"
	for len(p.inFlight) > 0 {
		if d := c.next().report; d != nil && !d.done && !(d.serve == o.pid && paused(*d)) {
			c.release(*d)
		}
	}
	// A fenced node joins again, as a new incarnation (§11): it does not
	// exit, and takes back the crashes its recovery counted (§4).
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
	resumed := len(c.ledger.starts)
	c.release(*redelivered)
	c.waiting = "every message delivered, and the paused node joined again"
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done {
			c.release(*d)
		}
		if (h.changed || h.logged) && len(p.log.records("engine started")) == 2 && c.settled() {
			break
		}
	}
	t.Logf("%s after SIGCONT: %s", p.id, p.status())
	c.stopAll()

	hs := c.histories()
	requireOneDLVD(t, hs)
	// Resumed past its lease, the paused node must start nothing under its
	// old lease: what it had claimed is the new owner's to deliver. What it
	// starts after it joined again, its new incarnation claimed.
	rejoined := c.incarnationStart(p.id)
	for _, d := range c.ledger.starts[resumed:] {
		if d.serve != p.pid {
			continue
		}
		claimed := c.claimedAt(hs, d)
		require.False(t, claimed.Before(rejoined), "%s resumed past its lease and still started %s (attempt %d), which it had "+
			"claimed before the pause (at %s; it joined again at %s): deliveries %s", p.id, d.key(), d.attempt, claimed, rejoined,
			c.deliveriesOf(d.key()))
	}
	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.False(t, m.Blacklisted, "message %s", m.ID)
		if m.Stage != domain.Outbound {
			continue
		}
		k := c.keyOf(m)
		if _, ok := held[k]; !ok {
			// Not delivered by the paused node, but maybe claimed by it,
			// waiting for a worker: then it counts a crash, and the new
			// owner delivered it.
			require.Equal(t, 1, c.ledger.times[k], "%s was not in flight on the paused node; deliveries: %s; history %v",
				k, c.deliveriesOf(k), hs[m.ID])
			require.Zero(t, m.Crashes, "%s: the paused node came back, and took the crash back; history %v", k, hs[m.ID])
			if len(crashedOn(hs[m.ID])) > 0 {
				require.Equal(t, []string{p.id}, crashedOn(hs[m.ID]), "%s: history %v", k, hs[m.ID])
				require.Equal(t, []string{o.id}, completedBy(hs[m.ID]), "%s: history %v", k, hs[m.ID])
				require.True(t, tookBack(hs[m.ID], p.id), "%s: history %v", k, hs[m.ID])
			}
			continue
		}
		// The paused node's receiver finished it, and so did the new
		// owner's: the store took the new owner's outcome only. The
		// recovery counted a crash, which the paused node took back when
		// it came back.
		require.Equal(t, 2, c.ledger.times[k], "%s: deliveries", k)
		require.Zero(t, m.Crashes, "%s: the paused node came back, and took the crash back", k)
		require.Equal(t, []string{p.id}, crashedOn(hs[m.ID]), "%s: history %v", k, hs[m.ID])
		require.True(t, tookBack(hs[m.ID], p.id), "%s: history %v", k, hs[m.ID])
		require.Equal(t, []string{o.id}, completedBy(hs[m.ID]), "%s: the nodes that recorded it DLVD; history %v", k, hs[m.ID])
	}
	for k := range expected {
		require.Positive(t, c.ledger.times[k], "the receiver never got %s", k)
	}
	c.requireFirstCompletionsInOrder(msgs)
}

// TestClusterNodePausedInTransaction pauses a node, with a delivery in
// flight, while its heartbeat's transaction is open, as a garbage-collection
// pause or a frozen virtual machine can at any moment: the row locks its
// session keeps must not stop the other node, which takes the paused node's
// queues over and redelivers what it had in flight within
// cluster.lease_ttl + 2s, and lives on when the paused node resumes and
// finds itself fenced. To pause the node inside its transaction, the test
// locks the node's row of the nodes table itself, waits until the node's
// heartbeat waits for that lock, stops the node, and lets the lock go: the
// heartbeat's update then takes the row, and the stopped node cannot end
// its transaction.
func TestClusterNodePausedInTransaction(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{hold: true, workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second})
	batch := func(n int) []sendLine {
		var msgs []sendLine
		for i := range 6 {
			msgs = append(msgs, sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS",
				AppQueue: fmt.Sprintf("T%d", i), Payload: fmt.Sprintf("b%d-%d", n, i)})
		}
		return msgs
	}
	msgs := batch(0)
	c.send(msgs)
	c.start("n1")
	c.start("n2")
	c.waiting = "the first messages delivered"
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done {
			c.release(*d)
		}
		// The last delivery may come before the last node logs that
		// its engine started: either may be the happening to check at.
		if (h.changed || h.logged) && c.running() && c.settled() {
			break
		}
	}
	// The node to pause is the first to start a delivery of the next
	// messages; its deliveries are held from now on.
	more := batch(1)
	c.send(more)
	msgs = append(msgs, more...)
	var p, o *node
	c.waiting = "a node to start a delivery"
	for p == nil {
		if d := c.next().report; d != nil && !d.done {
			p = c.nodeOf(*d)
		}
	}
	o = c.nodes[0]
	if o == p {
		o = c.nodes[1]
	}
	for _, d := range o.inFlight {
		c.release(d)
	}

	ctx := context.Background()
	lock, err := pgx.Connect(ctx, c.pg)
	require.NoError(t, err)
	defer lock.Close(ctx)
	tx, err := lock.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE`, p.id)
	require.NoError(t, err)
	// The wait for a lock is a state that lasts: the test asks until it
	// holds, or gives up after waitLimit.
	for deadline := time.Now().Add(waitLimit); ; {
		var waiting bool
		require.NoError(t, c.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`,
			lock.PgConn().PID()).Scan(&waiting))
		if waiting {
			break
		}
		require.True(t, time.Now().Before(deadline), "the heartbeat of %s never waited for the lock on its row\n%s", p.id, c.describe())
	}
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGSTOP))
	pausedAt := time.Now()
	t.Cleanup(func() { _ = syscall.Kill(p.pid, syscall.SIGCONT) })
	require.NoError(t, tx.Commit(ctx))
	held := maps.Clone(p.inFlight)

	// The other node delivers everything, what the paused node had in
	// flight included, once it found it dead and recovered it.
	c.waiting = fmt.Sprintf("%s to recover the paused %s and deliver everything, %v included",
		o.id, p.id, slices.Collect(maps.Keys(held)))
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done && d.serve == o.pid {
			c.release(*d)
		}
		if !slices.ContainsFunc(more, func(m sendLine) bool { return !o.done[key(m.Receiver, m.Payload)] }) {
			break
		}
	}
	t.Logf("%s delivered everything %s after %s paused inside its heartbeat",
		o.id, c.ledger.order[len(c.ledger.order)-1].at.Sub(pausedAt).Round(time.Millisecond), p.id)
	for k := range held {
		require.True(t, o.done[k], "%s, in flight on the paused node, was redelivered by %s", k, o.id)
	}

	// The paused node resumes, finds itself fenced and joins again as a
	// new incarnation; both deliver what comes next.
	for _, d := range p.inFlight {
		c.release(d)
	}
	require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
	c.waiting = fmt.Sprintf("the resumed %s to find itself fenced and join again", p.id)
	for len(p.log.records("engine started")) < 2 {
		if d := c.next().report; d != nil && !d.done {
			c.release(*d)
		}
	}
	last := batch(2)
	c.send(last)
	msgs = append(msgs, last...)
	c.waiting = fmt.Sprintf("the messages sent after %s joined again", p.id)
	for slices.ContainsFunc(last, func(m sendLine) bool { return c.ledger.times[key(m.Receiver, m.Payload)] == 0 }) {
		if d := c.next().report; d != nil && !d.done {
			c.release(*d)
		}
	}
	c.stopAll()
	requireOneDLVD(t, c.histories())
	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
	}
	c.requireFirstCompletionsInOrder(msgs)
}

// TestClusterPoisonKillsTwoNodes sends a poison message, whose receiver
// kills the serve process that delivers it, to three nodes: it takes down
// exactly engine.blacklisting.crashes (2) of them, cluster-wide, and ends
// blacklisted; the third node lives on; no innocent message is blacklisted.
func TestClusterPoisonKillsTwoNodes(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{workers: 4, crashes: 2, shutdownTimeout: 10 * time.Second})
	msgs := mixedLoad(120, 6)
	expected := expectedKeys(msgs)
	// The poison heads an EOIO queue of its own, with a message behind it.
	msgs = append(msgs,
		sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "POISON", Payload: "POISON"},
		sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "POISON", Payload: "after-poison"})
	c.send(msgs)
	poison, follower := key("WMS", "POISON"), key("WMS", "after-poison")
	for _, id := range []string{"n1", "n2", "n3"} {
		c.start(id).mayExit = true // the poison decides which die
	}

	var dead []*node
	c.waiting = "the poison blacklisted and every other message delivered"
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done && d.key() == poison && d.attempt > 1 {
			// A blacklist candidate: its node let the deliveries in
			// flight end first, and starts nothing beside it.
			n := c.nodeOf(*d)
			require.Len(t, n.inFlight, 1, "the poison, a blacklist candidate, is delivered alone by %s; in flight: %v", n.id, slices.Collect(maps.Keys(n.inFlight)))
		}
		for _, n := range c.nodes {
			if n.status() != "running" && !slices.Contains(dead, n) {
				c.reap(n)
				dead = append(dead, n)
				t.Logf("the poison killed %s", n.id)
			}
		}
		require.LessOrEqual(t, len(dead), 2, "the poison killed %d nodes; engine.blacklisting.crashes is 2\n%s", len(dead), c.describe())
		if h.changed && c.settled() {
			break
		}
	}
	require.Len(t, dead, 2, "the poison is blacklisted after two crashes")
	c.stopAll()

	hs := c.histories()
	requireOneDLVD(t, hs)
	var poisoned *domain.Message
	outbound := 0
	for _, m := range c.messages() {
		require.NotEqual(t, domain.StatusDLNG, m.Status, "message %s is stuck DLNG", m.ID)
		if m.Stage == domain.Inbound {
			require.Equal(t, domain.StatusDLVD, m.Status, "inbound message %s (%s)", m.ID, c.payloads[m.ID])
			require.False(t, m.Blacklisted, "inbound message %s", m.ID)
			require.LessOrEqual(t, m.Crashes, 1, "inbound message %s", m.ID)
			continue
		}
		outbound++
		switch k := c.keyOf(m); k {
		case poison:
			require.Equal(t, domain.StatusNDLV, m.Status)
			require.True(t, m.Blacklisted)
			require.Equal(t, 2, m.Crashes)
			require.Equal(t, domain.ErrorCrash, m.ErrorClass)
			require.Contains(t, m.Error, "died 2 times")
			// Delivered twice, by the two nodes it took down, in turn.
			var by []string
			for _, e := range hs[m.ID] {
				if e.To == domain.StatusDLNG {
					by = append(by, e.Node)
				}
			}
			require.Equal(t, []string{dead[0].id, dead[1].id}, by, "the nodes that delivered the poison; history %v", hs[m.ID])
			poisoned = &m
		case follower:
			require.Equal(t, domain.StatusHOLD, m.Status)
			require.Zero(t, m.Crashes)
			require.False(t, m.Blacklisted)
		default:
			require.Equal(t, domain.StatusDLVD, m.Status, "%s (%s): %s", m.ID, k, m.Error)
			require.False(t, m.Blacklisted, "%s (%s) is innocent", m.ID, k)
			require.LessOrEqual(t, m.Crashes, 1, "%s (%s): only the poison's first crash can touch an innocent", m.ID, k)
			require.True(t, c.ledger.ids[m.ID], "%s (%s) is DLVD, but the receiver never finished it", m.ID, k)
		}
	}
	require.Equal(t, len(msgs), outbound, "one outbound message per inbound message")
	require.NotNil(t, poisoned)
	for k := range expected {
		require.Positive(t, c.ledger.times[k], "the receiver never got %s", k)
	}
	blocked := false
	for _, q := range c.queues() {
		if q.Name == poisoned.Queue {
			require.Equal(t, domain.QueueBlocked, q.State)
			blocked = true
		}
	}
	require.True(t, blocked, "queue %s is not listed", poisoned.Queue)
	require.Equal(t, poisoned.ID+"\n", string(c.queuectl("", "blacklist", "list", "-o", "ids")))
}

// TestClusterScaleOutAndIn runs one node under load, starts two more, then
// stops those two with SIGTERM, a clean stop: the queues spread (each node
// delivers) and come back to the first node, nothing is lost and nothing
// reaches the receiver twice, and no message counts a crash.
func TestClusterScaleOutAndIn(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: 10 * time.Second})
	msgs := mixedLoad(300, 13)
	c.send(msgs)
	expected := expectedKeys(msgs)

	// One node alone.
	n1 := c.start("n1")
	c.waiting = "n1 to deliver 40 messages"
	for len(n1.done) < 40 {
		if d := c.next().report; d != nil && !d.done {
			c.release(*d)
		}
	}
	// Three nodes: n1 may deliver at most 20 more than the two others
	// together, so that work is left for them whenever they get queues.
	n2, n3 := c.start("n2"), c.start("n3")
	var waiting []delivery // n1's deliveries not yet let go
	released := 0          // n1's deliveries let go since n2 and n3 started
	c.waiting = "n2 and n3 to deliver 5 messages each (n1 is held to 20 more than they deliver)"
	for len(n2.done) < 5 || len(n3.done) < 5 {
		d := c.next().report
		switch {
		case d == nil || d.done:
		case d.serve == n1.pid:
			waiting = append(waiting, *d)
		default:
			c.release(*d)
		}
		for ; len(waiting) > 0 && released < len(n2.done)+len(n3.done)+20; released++ {
			c.release(waiting[0])
			waiting = waiting[1:]
		}
		require.False(t, c.settled(), "everything was delivered before n2 and n3 delivered 5 messages each (n2 %d, n3 %d): the queues did not spread\n%s",
			len(n2.done), len(n3.done), c.describe())
	}
	for _, d := range waiting {
		c.release(d)
	}
	// Back to one node: n2 and n3 stop cleanly.
	spread := map[string]bool{} // the EOIO queues n2 and n3 delivered
	for _, d := range c.ledger.starts {
		if d.appQueue != "-" && (d.serve == n2.pid || d.serve == n3.pid) {
			spread[eoioQueue(d)] = true
		}
	}
	c.stop(n2, n3)
	stoppedAt := len(c.ledger.starts)
	c.waiting = "n1 to deliver the rest"
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done {
			c.release(*d)
		}
		if h.changed && c.settled() {
			break
		}
	}
	c.stopAll()

	returned := map[string]bool{}
	for _, d := range c.ledger.starts[stoppedAt:] {
		require.Equal(t, n1.pid, d.serve, "%s was delivered by a stopped node", d.key())
		if spread[eoioQueue(d)] {
			returned[eoioQueue(d)] = true
		}
	}
	t.Logf("n1 delivered %d, n2 %d, n3 %d; %d of the %d queues that n2 and n3 delivered came back to n1",
		len(n1.done), len(n2.done), len(n3.done), len(returned), len(spread))
	require.NotEmpty(t, returned, "no queue that n2 or n3 delivered came back to n1 (they delivered %v)", spread)

	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.Zero(t, m.Crashes, "message %s: no node crashed", m.ID)
		if m.Stage == domain.Outbound {
			require.Equal(t, 1, c.ledger.times[c.keyOf(m)], "%s: deliveries", c.keyOf(m))
		}
	}
	for k := range expected {
		require.Equal(t, 1, c.ledger.times[k], "%s: deliveries", k)
	}
	c.requireFirstCompletionsInOrder(msgs)
	requireOneDLVD(t, c.histories())
}

// TestClusterDeadNodeRecoveredOnce kills one of three nodes while it holds
// deliveries: both survivors find it dead, but its crash recovery runs
// once — each message it had DLNG gets crashes 1, not 2, and is delivered
// once more.
func TestClusterDeadNodeRecoveredOnce(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{hold: true, workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second})
	msgs := mixedLoad(96, 12)
	c.send(msgs)
	expected := expectedKeys(msgs)
	nodes := []*node{c.start("n1"), c.start("n2"), c.start("n3")}

	// Every delivery is held until the three nodes run and one has two
	// in flight.
	c.waiting = "a node with two deliveries in flight"
	for !c.running() || !slices.ContainsFunc(nodes, func(n *node) bool { return len(n.inFlight) >= 2 }) {
		c.next()
	}
	victim := slices.MaxFunc(nodes, func(a, b *node) int { return len(a.inFlight) - len(b.inFlight) })
	c.kill(victim)
	c.waiting = "every message delivered"
	for _, n := range nodes {
		if n != victim {
			for _, d := range n.inFlight {
				c.release(d)
			}
		}
	}
	for {
		h := c.next()
		if d := h.report; d != nil && !d.done {
			c.release(*d)
		}
		if h.changed && c.settled() {
			break
		}
	}
	c.stopAll()
	// Its receivers died with it: what it started, it never finished.
	crashed := victim.inFlight
	t.Logf("killed %s with %d deliveries in flight", victim.id, len(crashed))

	hs := c.histories()
	requireOneDLVD(t, hs)
	recovered := 0
	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.False(t, m.Blacklisted, "message %s", m.ID)
		if m.Stage != domain.Outbound {
			require.LessOrEqual(t, m.Crashes, 1, "inbound message %s", m.ID)
			continue
		}
		k := c.keyOf(m)
		require.Equal(t, 1, c.ledger.times[k], "%s: completed deliveries", k)
		if _, ok := crashed[k]; ok {
			require.Equal(t, 1, m.Crashes, "%s was in flight on the dead node, which died once", k)
		}
		// What the dead node had claimed, in flight or waiting for a
		// worker, went back to TBDL once; nothing else did.
		if m.Crashes > 0 {
			require.Equal(t, 1, m.Crashes, "%s: the dead node died once", k)
			require.Equal(t, []string{victim.id}, crashedOn(hs[m.ID]), "%s: returns to TBDL; history %v", k, hs[m.ID])
			recovered++
		} else {
			require.Empty(t, crashedOn(hs[m.ID]), "%s: history %v", k, hs[m.ID])
		}
	}
	require.GreaterOrEqual(t, recovered, len(crashed))
	for k := range expected {
		require.Positive(t, c.ledger.times[k], "the receiver never got %s", k)
	}
	require.Equal(t, 1, c.recoveries(victim.id), "crash recovery of %s, logged by the live nodes", victim.id)
	var n int
	require.NoError(t, c.db.QueryRow(context.Background(),
		`SELECT count(*) FROM nodes WHERE id = $1 AND recovered_at IS NOT NULL`, victim.id).Scan(&n))
	require.Equal(t, 1, n, "incarnations of %s recovered", victim.id)
	c.requireFirstCompletionsInOrder(msgs)
}

// busiest picks, of these nodes, the one whose leased queues have the most
// messages left to deliver, and returns it with those queues.
func (c *cluster) busiest(nodes []*node) (*node, []string) {
	c.t.Helper()
	rows, err := c.db.Query(context.Background(), `SELECT l.node, l.queue FROM leases l
		WHERE (SELECT count(*) FROM messages m WHERE m.queue = l.queue AND m.status IN ('TBDL', 'DLNG', 'WAIT')) >= 2
		ORDER BY l.queue`)
	require.NoError(c.t, err)
	queues := map[string][]string{}
	var id, q string
	_, err = pgx.ForEachRow(rows, []any{&id, &q}, func() error {
		queues[id] = append(queues[id], q)
		return nil
	})
	require.NoError(c.t, err)
	n := slices.MaxFunc(nodes, func(a, b *node) int { return len(queues[a.id]) - len(queues[b.id]) })
	require.NotEmpty(c.t, queues[n.id], "no node owns a queue with work left\n%s", c.describe())
	return n, queues[n.id]
}

// recoveries counts the crash recoveries of a dead node that the live
// nodes logged.
func (c *cluster) recoveries(dead string) int {
	n := 0
	for _, g := range c.nodes {
		for _, rec := range g.log.records("crash recovery") {
			if rec["dead_node"] == dead {
				n++
			}
		}
	}
	return n
}

// deliveriesOf describes the deliveries of a key: when each started and
// ended, relative to the first, and on which node.
func (c *cluster) deliveriesOf(k string) string {
	var b strings.Builder
	var t0 time.Time
	for _, d := range c.ledger.starts {
		if d.key() == k {
			if t0.IsZero() {
				t0 = d.at
			}
			fmt.Fprintf(&b, "[started on %s at +%s, attempt %d]", c.nodeOf(d).id, d.at.Sub(t0).Round(time.Millisecond), d.attempt)
		}
	}
	for _, d := range c.ledger.order {
		if d.key() == k {
			fmt.Fprintf(&b, "[done on %s at +%s]", c.nodeOf(d).id, d.at.Sub(t0).Round(time.Millisecond))
		}
	}
	return b.String()
}
