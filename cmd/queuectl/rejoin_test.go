//go:build unix

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// A clean stop is no crash, and neither is a pause (§4): the heartbeats of
// a node go on through the drain of a clean stop, until it leaves; and a
// node declared dead while it was paused takes back, when it comes back,
// the crashes the recovery of its messages counted. A process that dies
// while paused never comes back: its crashes stand.

// TestServeStopOutlivesTheLease: SIGTERM while deliveries run that outlive
// cluster.lease_ttl, on a bbolt file. The heartbeats go on through the
// drain, so the lease stays fresh and no delivery is cancelled: serve
// records every outcome, exits 0, and its next start counts no crash.
func TestServeStopOutlivesTheLease(t *testing.T) {
	t.Parallel()
	const leaseTTL = time.Second
	r := newRig(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: time.Minute,
		heartbeat: 100 * time.Millisecond, leaseTTL: leaseTTL})
	msgs := []sendLine{
		{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "a"},
		{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "b"},
		{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "c"},
	}
	r.send(msgs)
	expected := expectedKeys(msgs)

	g := r.start(expected)
	for len(g.inFlight) < len(msgs) {
		h := g.next()
		require.False(t, h.exited, "serve exited: %s; stderr:\n%s", g.status(), g.log)
	}
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	g.waitLogged("engine stopping: waiting for deliveries in flight")
	// The deliveries outlive the lease: the test holds them for twice
	// lease_ttl after the stop began — the duration the case is about,
	// which nothing of serve's signals — then lets them end.
	outlive := time.NewTimer(2 * leaseTTL)
	defer outlive.Stop()
	<-outlive.C
	require.Equal(t, "running", g.status(), "stderr:\n%s", g.log)
	for _, d := range g.inFlight {
		r.release(d)
	}
	g.waitExit(false)
	require.Equal(t, 0, g.exitCode(), "serve after SIGTERM: %s; stderr:\n%s", g.status(), g.log)
	require.NotContains(t, g.log.String(), "overdue", "stderr:\n%s", g.log)
	require.NotContains(t, g.log.String(), "lease expired", "stderr:\n%s", g.log)

	for _, m := range r.messages() {
		if m.Stage != domain.Outbound {
			continue
		}
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s: %s", r.keyOf(m), m.Error)
		require.Equal(t, 1, m.Attempts, "message %s", r.keyOf(m))
		require.Zero(t, m.Crashes, "message %s", r.keyOf(m))
	}
	g = r.start(expected)
	g.waitLogged("engine started")
	g.stop()
	require.False(t, g.logged("crash recovery"), "a clean stop is no crash; stderr:\n%s", g.log)
	for _, m := range r.messages() {
		require.Zero(t, m.Crashes, "message %s", m.ID)
		require.Contains(t, []domain.Status{domain.StatusDLVD}, m.Status, "message %s", m.ID)
	}
}

// TestClusterStopOutlivesTheLease: the same on PostgreSQL, where a node
// whose heartbeat lapsed may record nothing, and would be taken for dead.
// The test waits until the stopping node has heartbeat for longer than
// lease_ttl after the stop, then lets its deliveries end: every outcome is
// recorded, serve exits 0, and no node counts a crash.
func TestClusterStopOutlivesTheLease(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: time.Minute})
	c.watchNodes()
	msgs := []sendLine{
		{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "a"},
		{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "b"},
		{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "c"},
	}
	c.send(msgs)
	n := c.start("n1")
	c.waitWithin("three deliveries in flight", func() bool { return len(n.inFlight) == len(msgs) })
	n.mayExit = true
	require.NoError(t, n.cmd.Process.Signal(syscall.SIGTERM))
	c.waitWithin("the node to say it stops", func() bool { return n.logged("engine stopping: waiting for deliveries in flight") })
	stoppedAt := c.dbNow()
	c.waitWithin("heartbeats for longer than lease_ttl after the stop", func() bool {
		return c.lastHeartbeat("n1").After(stoppedAt.Add(clusterLeaseTTL))
	})
	require.Equal(t, "running", n.status(), "stderr:\n%s", n.log)
	for _, d := range n.inFlight {
		c.release(d)
	}
	c.waitWithin("the node to exit", func() bool { return n.status() != "running" })
	require.Equal(t, 0, n.exitCode(), "serve after SIGTERM: %s; stderr:\n%s", n.status(), n.log)
	require.NotContains(t, n.log.String(), "overdue", "stderr:\n%s", n.log)
	for _, m := range c.messages() {
		if m.Stage != domain.Outbound {
			continue
		}
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s: %s", c.keyOf(m), m.Error)
		require.Zero(t, m.Crashes, "message %s", c.keyOf(m))
	}
	var recovered int
	require.NoError(t, c.db.QueryRow(context.Background(), `SELECT count(*) FROM nodes WHERE recovered_at IS NOT NULL`).
		Scan(&recovered))
	require.Zero(t, recovered, "the node left; nobody recovered it")
}

// TestClusterPausedCandidateRejoins: a message that took one node down is
// a blacklist candidate, delivered alone; the node delivering it is paused
// (SIGSTOP) past lease_ttl, and the other node's recovery blacklists it —
// it cannot tell a pause from a death. Resumed (SIGCONT), the paused node
// joins again and takes that crash back: the message is a candidate again,
// its EOIO successors are not held, and it is delivered with crashes 1.
// Killed instead (SIGKILL), the node never comes back: the message stays
// blacklisted.
func TestClusterPausedCandidateRejoins(t *testing.T) {
	t.Parallel()
	for _, resume := range []bool{true, false} {
		name := "SIGCONT"
		if !resume {
			name = "SIGKILL"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, rigOptions{hold: true, workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second})
			msgs := []sendLine{
				{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "first"},
				{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "second"},
				{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "third"},
			}
			c.send(msgs)
			// A first node dies delivering the head: it is a candidate.
			first := c.start("n1")
			c.waitWithin("n1 to deliver the head", func() bool { return len(first.inFlight) == 1 })
			c.kill(first)
			a, b := c.start("n2"), c.start("n3")
			var held delivery
			c.waitWithin("the candidate delivered again", func() bool {
				for _, n := range []*node{a, b} {
					for _, d := range n.inFlight {
						held = d
						return true
					}
				}
				return false
			})
			require.Equal(t, "first", held.payload)
			require.Equal(t, 1, c.show(held.id).Crashes)
			p, o := c.nodeOf(held), a
			if p == a {
				o = b
			}

			require.NoError(t, syscall.Kill(p.pid, syscall.SIGSTOP))
			t.Cleanup(func() { _ = syscall.Kill(p.pid, syscall.SIGCONT) })
			c.waitWithin("the other node to blacklist the candidate", func() bool {
				m := c.show(held.id)
				return m.Status == domain.StatusNDLV && m.Blacklisted
			})
			require.Equal(t, 2, c.show(held.id).Crashes)
			require.Equal(t, 2, c.count(domain.StatusHOLD), "the EOIO queue is blocked behind it")
			// The paused node's receiver ends well meanwhile.
			c.release(held)

			if !resume {
				c.kill(p)
				// A new process under the id: the one that was paused is
				// dead for good, and its crash stands.
				again := c.start(p.id)
				c.waitWithin(p.id+" to start again", func() bool { return again.logged("engine started") })
				m := c.show(held.id)
				require.Equal(t, domain.StatusNDLV, m.Status)
				require.True(t, m.Blacklisted)
				require.Equal(t, 2, m.Crashes)
				require.Equal(t, 2, c.count(domain.StatusHOLD))
				require.False(t, again.logged("crashes taken back: this node was paused, not dead, when another node recovered its messages"))
				c.stopAll()
				return
			}

			require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
			c.waitWithin("every message delivered", func() bool {
				for _, n := range []*node{o, p} {
					for _, d := range n.inFlight {
						c.release(d)
					}
				}
				return c.count(domain.StatusDLVD) == len(msgs)
			})
			require.True(t, p.logged("crashes taken back: this node was paused, not dead, when another node recovered its messages"),
				"stderr of %s:\n%s", p.id, p.log)
			c.stopAll()
			m := c.show(held.id)
			require.Equal(t, domain.StatusDLVD, m.Status)
			require.False(t, m.Blacklisted)
			require.Equal(t, 1, m.Crashes, "the crash of the node that died stands, the pause's is taken back")
			require.True(t, slices.ContainsFunc(m.History, func(h domain.HistoryEntry) bool {
				return h.Reason == fmt.Sprintf("crash 2 taken back: node %s was paused, not dead; it is no longer blacklisted", p.id)
			}), "history: %v", m.History)
			c.requireFirstCompletionsInOrder(msgs)
		})
	}
}

// TestClusterPausedDeliveriesRejoin: a node with ordinary deliveries in
// flight is paused (SIGSTOP) past lease_ttl; the other node's recovery
// makes candidates of them all, each delivered alone. Resumed (SIGCONT),
// the paused node takes those crashes back: no message keeps a crash.
// Killed instead (SIGKILL), its crashes stand.
func TestClusterPausedDeliveriesRejoin(t *testing.T) {
	t.Parallel()
	for _, resume := range []bool{true, false} {
		name := "SIGCONT"
		if !resume {
			name = "SIGKILL"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: 10 * time.Second})
			var msgs []sendLine
			for i := range 24 {
				msgs = append(msgs, sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: fmt.Sprintf("m%02d", i)})
			}
			c.send(msgs)
			a, b := c.start("n1"), c.start("n2")
			var p, o *node
			c.waitWithin("a node with two deliveries in flight", func() bool {
				if !c.running() {
					return false
				}
				for _, n := range []*node{a, b} {
					if len(n.inFlight) >= 2 {
						p = n
					}
				}
				return p != nil
			})
			o = a
			if p == a {
				o = b
			}
			require.NoError(t, syscall.Kill(p.pid, syscall.SIGSTOP))
			t.Cleanup(func() { _ = syscall.Kill(p.pid, syscall.SIGCONT) })
			paused := p.inFlight
			p.inFlight = map[string]delivery{}
			for _, d := range o.inFlight {
				c.release(d)
			}
			c.waitWithin("the other node to recover the paused one", func() bool {
				for _, d := range o.inFlight {
					c.release(d)
				}
				return c.recoveries(p.id) == 1
			})
			crashed := c.crashed()
			for k := range paused {
				require.True(t, crashed[k], "%s was in flight on the paused node: its recovery counts a crash", k)
			}
			// The paused node's receivers end well meanwhile.
			for _, d := range paused {
				c.release(d)
			}

			if !resume {
				c.kill(p)
				again := c.start(p.id)
				c.waitWithin("every message delivered", func() bool {
					for _, n := range []*node{o, again} {
						for _, d := range n.inFlight {
							c.release(d)
						}
					}
					return c.count(domain.StatusDLVD) == len(msgs)
				})
				c.stopAll()
				now := c.crashed()
				for k := range crashed {
					require.True(t, now[k], "%s keeps the crash of a node that died", k)
				}
				return
			}

			require.NoError(t, syscall.Kill(p.pid, syscall.SIGCONT))
			c.waitWithin("every message delivered, and the crashes taken back", func() bool {
				for _, n := range []*node{o, p} {
					for _, d := range n.inFlight {
						c.release(d)
					}
				}
				return c.count(domain.StatusDLVD) == len(msgs) &&
					p.logged("crashes taken back: this node was paused, not dead, when another node recovered its messages")
			})
			c.stopAll()
			require.Empty(t, c.crashed(), "no message keeps a crash after the paused node came back")
			hs := c.histories()
			for _, m := range c.messages() {
				require.Equal(t, domain.StatusDLVD, m.Status)
				if crashed[c.keyOf(m)] {
					require.True(t, slices.ContainsFunc(hs[m.ID], func(h domain.HistoryEntry) bool {
						return strings.HasPrefix(h.Reason, "crash 1 taken back: node "+p.id+" was paused, not dead")
					}), "%s: history %v", c.keyOf(m), hs[m.ID])
				}
			}
		})
	}
}

// waitWithin waits, on the cluster's happenings, until ok holds, and fails
// the test when it does not within waitLimit, however much happens.
func (c *cluster) waitWithin(what string, ok func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	c.waiting = what
	for !ok() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s did not happen within %s\n%s", what, waitLimit, c.describe())
		}
		c.next()
	}
}

// watchNodes makes every change of the nodes table — a heartbeat — a
// change the cluster's waits see.
func (c *cluster) watchNodes() {
	c.t.Helper()
	_, err := c.db.Exec(context.Background(), `CREATE TRIGGER test_nodes_changed AFTER UPDATE ON nodes
		FOR EACH STATEMENT EXECUTE FUNCTION test_notify_changed()`)
	require.NoError(c.t, err)
}

// dbNow is the database's clock.
func (c *cluster) dbNow() time.Time {
	c.t.Helper()
	var now time.Time
	require.NoError(c.t, c.db.QueryRow(context.Background(), `SELECT now()`).Scan(&now))
	return now
}

// lastHeartbeat is the last heartbeat of node id's latest incarnation.
func (c *cluster) lastHeartbeat(id string) time.Time {
	c.t.Helper()
	var at time.Time
	require.NoError(c.t, c.db.QueryRow(context.Background(), `SELECT heartbeat_at FROM nodes WHERE id = $1
		ORDER BY incarnation DESC LIMIT 1`, id).Scan(&at))
	return at
}

// tookBack says a history has the entry of a crash that node id, paused
// and back, took back.
func tookBack(h []domain.HistoryEntry, id string) bool {
	return slices.ContainsFunc(h, func(e domain.HistoryEntry) bool {
		return strings.HasPrefix(e.Reason, "crash ") && strings.Contains(e.Reason, " taken back: node "+id+" was paused, not dead")
	})
}

// crashed lists the keys of the outbound messages with a crash.
func (c *cluster) crashed() map[string]bool {
	c.t.Helper()
	out := map[string]bool{}
	for _, m := range c.messages() {
		if m.Stage == domain.Outbound && m.Crashes > 0 {
			out[c.keyOf(m)] = true
		}
	}
	return out
}
