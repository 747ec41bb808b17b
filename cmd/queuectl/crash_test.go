//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// TestServePoisonMessageIsBlacklisted lets a poison message kill real serve
// processes (§4): it may take down engine.blacklisting.crashes (2) of them,
// then it is blacklisted, and no innocent message is. The first crash
// happens, by the test's design, while two innocent deliveries are in
// flight: they get crashes = 1 but are never blamed, because after it the
// poison is delivered alone.
func TestServePoisonMessageIsBlacklisted(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{hold: true, workers: 8, crashes: 2, shutdownTimeout: 10 * time.Second})
	var msgs []sendLine
	for i := 1; i <= 12; i++ {
		msgs = append(msgs, sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: fmt.Sprintf("eo-%d", i)})
	}
	for _, q := range []string{"A", "B", "C"} {
		for i := 1; i <= 6; i++ {
			msgs = append(msgs, sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: q, Payload: fmt.Sprintf("%s-%d", q, i)})
		}
	}
	expected := map[string]bool{}
	for _, m := range msgs {
		expected[key(m.Receiver, m.Payload)] = true
	}
	// The poison heads an EOIO queue of its own, with a message behind it.
	msgs = append(msgs,
		sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "POISON", Payload: "POISON"},
		sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "POISON", Payload: "after-poison"})
	r.send(msgs)
	poison, follower := key("WMS", "POISON"), key("WMS", "after-poison")
	// The heads of the EO queue and of queue A: the test keeps them in
	// flight until the poison has killed the first serve.
	innocents := []string{key("WMS", "eo-1"), key("WMS", "A-1")}

	// Start serve until one stays up and finishes the work; the poison's
	// script kills the others.
	var gens []*generation
	for stopped := false; !stopped; {
		require.Less(t, len(gens), 3, "the poison killed serve %d times; engine.blacklisting.crashes is 2", len(gens))
		g := r.start(expected)
		gens = append(gens, g)
		held := map[string]delivery{}
		for {
			h := g.next()
			if h.exited {
				g.requireKilled()
				g.killGroup() // the innocents' receivers die with the node
				break
			}
			if d := h.report; d != nil && !d.done {
				switch {
				case len(gens) == 1 && (d.key() == poison || slices.Contains(innocents, d.key())):
					held[d.key()] = *d
					if len(held) == 1+len(innocents) {
						r.release(held[poison])
					}
				case d.key() == poison && d.serve == g.pid:
					require.Len(t, g.inFlight, 1, "the poison is a blacklist candidate and must be delivered alone; in flight: %v", g.inFlight)
					r.release(*d)
				default:
					r.release(*d)
				}
			}
			if g.logged("message blacklisted") && g.finished() {
				g.stop()
				stopped = true
				break
			}
		}
	}

	// Two crashes, and the poison alone was in flight at the second: the
	// third serve's recovery blacklisted it and had nothing else to return.
	require.Len(t, gens, 3)
	rec := gens[1].log.record("crash recovery")
	require.NotNil(t, rec, "the second serve recovers after the first crash; stderr:\n%s", gens[1].log)
	require.EqualValues(t, 0, rec["blacklisted"])
	require.GreaterOrEqual(t, rec["returned_to_tbdl"], float64(1+len(innocents)))
	rec = gens[2].log.record("crash recovery")
	require.NotNil(t, rec, "the third serve recovers after the second crash; stderr:\n%s", gens[2].log)
	require.EqualValues(t, 1, rec["blacklisted"])
	require.EqualValues(t, 0, rec["returned_to_tbdl"])

	var poisoned *domain.Message
	outbound := 0
	for _, m := range r.messages() {
		require.NotEqual(t, domain.StatusDLNG, m.Status, "message %s is stuck DLNG", m.ID)
		if m.Stage == domain.Inbound {
			require.Equal(t, domain.StatusDLVD, m.Status, "inbound message %s (%s)", m.ID, r.payloads[m.ID])
			require.False(t, m.Blacklisted, "inbound message %s", m.ID)
			require.LessOrEqual(t, m.Crashes, 1, "inbound message %s", m.ID)
			continue
		}
		outbound++
		switch k := r.keyOf(m); {
		case k == poison:
			require.Equal(t, domain.StatusNDLV, m.Status)
			require.True(t, m.Blacklisted)
			require.Equal(t, 2, m.Crashes)
			require.Equal(t, domain.ErrorCrash, m.ErrorClass)
			require.Contains(t, m.Error, "died 2 times")
			// It names the node it took down last: the second serve.
			require.True(t, strings.HasSuffix(m.Node, fmt.Sprintf("-%d", gens[1].pid)), "node %q", m.Node)
			poisoned = &m
		case k == follower:
			// A blacklisted head blocks its EOIO queue like any NDLV.
			require.Equal(t, domain.StatusHOLD, m.Status)
			require.Zero(t, m.Crashes)
			require.False(t, m.Blacklisted)
		default:
			require.Equal(t, domain.StatusDLVD, m.Status, "%s (%s): %s", m.ID, k, m.Error)
			require.False(t, m.Blacklisted, "%s (%s) is innocent", m.ID, k)
			require.True(t, r.ledger.ids[m.ID], "%s (%s) is DLVD, but the receiver never finished it", m.ID, k)
			if slices.Contains(innocents, k) {
				// In flight at the first crash, then delivered once, alone.
				require.Equal(t, 1, m.Crashes, "%s (%s): crashes", m.ID, k)
				require.Equal(t, 1, r.ledger.times[k], "%s: deliveries", k)
			} else {
				// Others may have been in flight at the first crash too;
				// none was at the second.
				require.LessOrEqual(t, m.Crashes, 1, "%s (%s): crashes", m.ID, k)
			}
		}
	}
	require.Equal(t, len(msgs), outbound, "one outbound message per inbound message")
	require.NotNil(t, poisoned)
	for k := range expected {
		require.Positive(t, r.ledger.times[k], "the receiver never got %s", k)
	}
	blocked := false
	for _, q := range r.queues() {
		if q.Name == poisoned.Queue {
			require.Equal(t, domain.QueueBlocked, q.State)
			require.NotNil(t, q.Head)
			require.Equal(t, poisoned.ID, q.Head.ID)
			blocked = true
		}
	}
	require.True(t, blocked, "queue %s is not listed", poisoned.Queue)
	// The operator's view: the poison, and nothing else, is on the blacklist.
	require.Equal(t, poisoned.ID+"\n", string(r.queuectl("", "blacklist", "list", "-o", "ids")))
}

// TestServeSurvivesRandomKills kills serve with SIGKILL, together with the
// receivers it runs, after a random number of deliveries, five times, then
// lets a last serve finish: every message reaches the receiver at least
// once and ends DLVD, EOIO order holds, and with a high crash threshold
// nothing is blacklisted.
func TestServeSurvivesRandomKills(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill points drawn from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	r := newRig(t, rigOptions{workers: 8, crashes: 100, shutdownTimeout: 10 * time.Second})
	appQueues := []string{"DE", "FR", "IT", "ES", "NL"}
	var msgs []sendLine
	for i := range 200 {
		m := sendLine{QoS: "EO", Sender: "ERP", Payload: fmt.Sprintf("m%03d", i)}
		if i%3 != 0 {
			m.QoS, m.AppQueue = "EOIO", appQueues[i%len(appQueues)]
		}
		msgs = append(msgs, m) // no receiver: routed to WMS and ARCHIVE
	}
	r.send(msgs)
	expected := map[string]bool{}
	for _, m := range msgs {
		expected[key("WMS", m.Payload)] = true
		expected[key("ARCHIVE", m.Payload)] = true
	}

	const kills = 5
	var gens []*generation
	for killed, stopped := 0, false; !stopped; {
		g := r.start(expected)
		gens = append(gens, g)
		killAt := 0 // the delivery of this serve after which it is killed
		if killed < kills {
			killAt = 1 + rng.IntN(max(1, len(g.todo)/4))
		}
		delivered := 0
		for {
			h := g.next()
			require.False(t, h.exited, "serve exited by itself: %s; stderr:\n%s", g.status(), g.log)
			if d := h.report; d != nil && d.done && d.serve == g.pid {
				if delivered++; delivered == killAt {
					t.Logf("serve %d: killed after %d deliveries, %d of %d to do delivered", len(gens), delivered, len(g.done), len(g.todo))
					g.kill()
					killed++
					break
				}
			}
			if g.finished() {
				g.stop()
				stopped = true
				break
			}
		}
	}
	require.Len(t, gens, kills+1)

	crashed := 0
	outbound := map[string]bool{}
	for _, m := range r.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.False(t, m.Blacklisted, "message %s", m.ID)
		require.LessOrEqual(t, m.Crashes, kills, "message %s", m.ID)
		crashed += m.Crashes
		if m.Stage == domain.Outbound {
			k := r.keyOf(m)
			require.False(t, outbound[k], "%s was routed twice", k)
			outbound[k] = true
			require.True(t, r.ledger.ids[m.ID], "%s (%s) is DLVD, but the receiver never finished it", m.ID, k)
		}
	}
	require.Len(t, outbound, len(expected))
	require.Positive(t, crashed, "no kill caught a delivery in flight")
	for k := range expected {
		require.Positive(t, r.ledger.times[k], "the receiver never got %s", k)
	}

	// EOIO: per receiver and app queue, each message reached the receiver
	// for the first time only after the one sent before it.
	r.requireFirstCompletionsInOrder(msgs)
}

// TestServeStopHandsBackSlowDelivery stops serve with SIGTERM while a
// delivery outlasts engine.shutdown_timeout: serve exits 0, and the message
// goes back to TBDL with neither the attempt nor a crash counted; the next
// serve delivers it without crash recovery.
func TestServeStopHandsBackSlowDelivery(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: time.Second})
	r.send([]sendLine{{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "slow"}})
	expected := map[string]bool{key("WMS", "slow"): true}

	g := r.start(expected)
	d := g.waitStart() // and never let it finish
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	g.waitExit(false)
	require.Equal(t, 0, g.exitCode(), "serve after SIGTERM: %s; stderr:\n%s", g.status(), g.log)
	require.True(t, g.logged("engine stopping: waiting for deliveries in flight"), "stderr:\n%s", g.log)

	m := r.show(d.id)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Attempts)
	require.Zero(t, m.Crashes)
	require.False(t, m.Blacklisted)
	require.Empty(t, m.Node)
	last := m.History[len(m.History)-1]
	require.Equal(t, domain.StatusDLNG, last.From)
	require.Equal(t, domain.StatusTBDL, last.To)
	require.Equal(t, "handed back at shutdown", last.Reason)

	g = r.start(expected)
	for !g.finished() {
		h := g.next()
		require.False(t, h.exited, "serve exited by itself: %s; stderr:\n%s", g.status(), g.log)
		if d := h.report; d != nil && !d.done {
			r.release(*d)
		}
	}
	g.stop()
	require.False(t, g.logged("crash recovery"), "a clean stop is no crash; stderr:\n%s", g.log)
	m = r.show(d.id)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 1, m.Attempts)
	require.Zero(t, m.Crashes)
	require.Equal(t, 1, r.ledger.times[d.key()])
}

// TestServeStopLetsDeliveryFinish stops serve with SIGTERM while a delivery
// runs that ends within engine.shutdown_timeout: serve waits for it, records
// it DLVD and exits 0.
func TestServeStopLetsDeliveryFinish(t *testing.T) {
	t.Parallel()
	// The test lets the delivery end only once serve says it is stopping;
	// a minute leaves room for that on the slowest machine.
	r := newRig(t, rigOptions{hold: true, workers: 4, crashes: 2, shutdownTimeout: time.Minute})
	r.send([]sendLine{{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: "slow"}})
	expected := map[string]bool{key("WMS", "slow"): true}

	g := r.start(expected)
	d := g.waitStart()
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	g.waitLogged("engine stopping: waiting for deliveries in flight")
	r.release(d)
	for !g.done[d.key()] {
		h := g.next()
		require.False(t, h.exited, "serve exited before the delivery ended: %s; stderr:\n%s", g.status(), g.log)
	}
	g.waitExit(false)
	require.Equal(t, 0, g.exitCode(), "serve after SIGTERM: %s; stderr:\n%s", g.status(), g.log)

	m := r.show(d.id)
	require.Equal(t, domain.StatusDLVD, m.Status)
	require.Equal(t, 1, m.Attempts)
	require.Zero(t, m.Crashes)
}

// show returns a message with its history.
func (r *rig) show(id string) domain.Message {
	r.t.Helper()
	var m domain.Message
	require.NoError(r.t, json.Unmarshal(r.queuectl("", "message", "show", id, "-o", "json"), &m))
	return m
}

// waitStart waits for serve to start a delivery and returns it, not let go.
func (g *generation) waitStart() delivery {
	g.r.t.Helper()
	for {
		h := g.next()
		require.False(g.r.t, h.exited, "serve exited: %s; stderr:\n%s", g.status(), g.log)
		if d := h.report; d != nil && !d.done {
			return *d
		}
	}
}

// waitLogged waits for serve to log a line with this msg.
func (g *generation) waitLogged(msg string) {
	g.r.t.Helper()
	for !g.logged(msg) {
		h := g.next()
		require.False(g.r.t, h.exited, "serve exited before it logged %q: %s; stderr:\n%s", msg, g.status(), g.log)
	}
}
