//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// TestServeEOIOSwitchUnderLoad switches EOIO to shared queues while serve
// delivers (§10), with a SIGKILL of serve in the middle of the switch, and
// back to one queue per app queue with another SIGKILL: per receiver and
// app queue, every message reaches the receiver for the first time after
// the one sent before it, across both switches and both crashes, and every
// message ends DLVD.
func TestServeEOIOSwitchUnderLoad(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill points drawn from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	r := newRig(t, rigOptions{hold: true, workers: 8, crashes: 100, shutdownTimeout: 10 * time.Second})
	appQueues := []string{"DE", "FR", "IT", "ES", "NL", "BE", "AT", "CH"}
	var sent []sendLine // every message, in the order it was sent
	phase := func(name string, n int) []sendLine {
		var msgs []sendLine
		for i := range n {
			for _, q := range appQueues {
				// No receiver: ERP's messages are routed to WMS and ARCHIVE.
				msgs = append(msgs, sendLine{QoS: "EOIO", Sender: "ERP", AppQueue: q, Payload: fmt.Sprintf("%s-%s-%02d", q, name, i)})
			}
		}
		r.send(msgs)
		sent = append(sent, msgs...)
		return msgs
	}
	expected := map[string]bool{}
	expect := func(msgs []sendLine) {
		for _, m := range msgs {
			expected[key("WMS", m.Payload)], expected[key("ARCHIVE", m.Payload)] = true, true
		}
	}

	// One queue per app queue; serve delivers a few, then the switch to 4
	// shared queues per stage comes while deliveries are held in flight,
	// more messages are sent, and serve is killed with deliveries in flight.
	expect(phase("old", 8))
	g := &held{generation: r.start(expected)}
	g.deliver(10)
	st := r.eoio("switch", "--queues", "4")
	require.Equal(t, admin.EOIOStarted, st.State, "the old queues still hold messages")
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}, st.Current)
	expect(phase("new", 8))
	g.deliver(1 + rng.IntN(60))
	g.killInFlight()

	// The next serve recovers and finishes the old set and the new one.
	g = &held{generation: r.start(expected)}
	g.deliver(-1)
	g.stop()
	require.Equal(t, admin.EOIOActive, r.eoio("status").State)

	// Switching back works the same way: a new set, one queue per app queue
	// again, named with XBQ; messages still in the XB2 set go first. serve
	// is killed again in the middle, and the next one finishes.
	expect(phase("last-shared", 3))
	st = r.eoio("switch", "--queues", "0")
	require.Equal(t, admin.EOIOStarted, st.State)
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXBQ}, st.Current)
	expect(phase("back", 3))
	g = &held{generation: r.start(expected)}
	g.deliver(1 + rng.IntN(40))
	g.killInFlight()
	g = &held{generation: r.start(expected)}
	g.deliver(-1)
	g.stop()

	st = r.eoio("status")
	require.Equal(t, admin.EOIOInactive, st.State)
	require.Zero(t, st.ErrorQueues.Queues, "no error happened")
	crashed := 0
	for _, m := range r.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s) in %s: %s", m.ID, m.Stage, m.Queue, m.Error)
		require.False(t, m.Blacklisted)
		crashed += m.Crashes
		if m.Stage == domain.Outbound {
			require.True(t, r.ledger.ids[m.ID], "%s (%s) is DLVD, but the receiver never finished it", m.ID, r.keyOf(m))
		}
	}
	require.Positive(t, crashed, "no kill caught a delivery in flight")
	var shared int
	for _, q := range r.queues() {
		if domain.SharedQueueName(q.Name) {
			shared++
		}
	}
	require.Positive(t, shared, "the XB2 set's shared queues were used")

	// Per receiver and app queue, the order of sending.
	position, count := map[string]int{}, map[string]int{}
	for _, m := range sent {
		position[m.Payload] = count[m.AppQueue]
		count[m.AppQueue]++
	}
	seen, next := map[string]bool{}, map[string]int{}
	for _, d := range r.ledger.order {
		if seen[d.key()] {
			continue // a redelivery after a crash (at least once, §8)
		}
		seen[d.key()] = true
		q := d.receiver + "/" + d.appQueue
		require.Equal(t, next[q], position[d.payload], "%s reached %s out of order", d.payload, q)
		next[q]++
	}
	for k := range expected {
		require.True(t, seen[k], "the receiver never got %s", k)
	}
}

// eoio runs `queuectl eoio ARGS -o json` (through serve's socket while it
// runs) and returns the status it prints.
func (r *rig) eoio(args ...string) *admin.EOIOStatus {
	r.t.Helper()
	var st admin.EOIOStatus
	require.NoError(r.t, json.Unmarshal(r.queuectl("", append(append([]string{"eoio"}, args...), "-o", "json")...), &st))
	return &st
}

// held is a serve whose deliveries the test lets end a number at a time:
// those that start beyond the number stay in flight, held, until the next
// call lets them go, or serve is killed with them.
type held struct {
	*generation
	waiting []delivery
}

// deliver lets n more deliveries start and waits until as many have ended
// (with -1: every delivery, until every message to do is delivered).
func (g *held) deliver(n int) {
	g.r.t.Helper()
	released := 0
	let := func(d delivery) {
		if n >= 0 && released >= n {
			g.waiting = append(g.waiting, d)
			return
		}
		released++
		g.r.release(d)
	}
	waiting := g.waiting
	g.waiting = nil
	for _, d := range waiting {
		let(d)
	}
	for done := 0; (n >= 0 && done < n) || (n < 0 && !g.finished()); {
		h := g.next()
		require.False(g.r.t, h.exited, "serve exited by itself: %s; stderr:\n%s", g.status(), g.log)
		switch d := h.report; {
		case d == nil || d.serve != g.pid:
		case d.done:
			done++
		default:
			let(*d)
		}
	}
}

// killInFlight kills serve and its receivers once a delivery is in flight.
func (g *held) killInFlight() {
	g.r.t.Helper()
	for len(g.inFlight) == 0 {
		h := g.next()
		require.False(g.r.t, h.exited, "serve exited by itself: %s; stderr:\n%s", g.status(), g.log)
	}
	g.r.t.Logf("serve killed with %d deliveries in flight, %d of %d to do delivered", len(g.inFlight), len(g.done), len(g.todo))
	g.kill()
}
