//go:build unix

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// TestServeTwoEOPoisonsAreBlacklistedInTurn sends two poison messages far
// apart in one busy EO queue, beside EOIO traffic, to real serve processes
// with eight workers. A blacklisted EO message leaves its queue (§4), so
// the second poison is reached too: each takes down exactly
// engine.blacklisting.crashes (2) processes, four in all; each is delivered
// alone as a blacklist candidate after its first crash; both end
// blacklisted, the EO queue goes on, and no innocent message is
// blacklisted.
func TestServeTwoEOPoisonsAreBlacklistedInTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{workers: 8, crashes: 2, shutdownTimeout: 10 * time.Second})
	var msgs []sendLine
	poisons := map[int]bool{10: true, 70: true} // more than a window and the workers apart
	for i := range 100 {
		p := fmt.Sprintf("eo-%03d", i)
		if poisons[i] {
			p = "POISON"
		}
		msgs = append(msgs, sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: p})
		if i%4 == 0 {
			msgs = append(msgs, sendLine{QoS: "EOIO", Sender: "ERP", Receiver: "WMS", AppQueue: "ORDERS", Payload: fmt.Sprintf("eoio-%03d", i)})
		}
	}
	// The two poisons share a payload: the receiver script reacts to it.
	// Tell them apart by the order they are sent in.
	r.send(msgs)
	expected := map[string]bool{}
	for _, m := range msgs {
		if m.Payload != "POISON" {
			expected[key("WMS", m.Payload)] = true
		}
	}

	var gens []*generation
	for stopped := false; !stopped; {
		require.Less(t, len(gens), 5, "two poisons killed serve %d times; each may kill it twice", len(gens))
		g := r.start(expected)
		gens = append(gens, g)
		for {
			h := g.next()
			if h.exited {
				g.requireKilled()
				g.killGroup()
				break
			}
			// (A report can come late from the serve killed before.)
			if d := h.report; d != nil && !d.done && d.payload == "POISON" && d.attempt > 1 && d.serve == g.pid {
				require.Len(t, g.inFlight, 1, "a blacklist candidate is delivered alone; in flight: %v", g.inFlight)
			}
			if g.finished() {
				g.stop()
				stopped = true
				break
			}
		}
	}
	require.Len(t, gens, 5, "each poison took down two processes, and the fifth serve finished")

	var blacklisted []domain.Message
	for _, m := range r.messages() {
		require.NotEqual(t, domain.StatusDLNG, m.Status, "message %s is stuck DLNG", m.ID)
		if m.Stage == domain.Inbound {
			require.Equal(t, domain.StatusDLVD, m.Status)
			continue
		}
		if r.payloads[m.SentID()] == "POISON" {
			require.Equal(t, domain.StatusNDLV, m.Status)
			require.True(t, m.Blacklisted)
			require.Equal(t, 2, m.Crashes)
			require.Equal(t, domain.ErrorCrash, m.ErrorClass)
			blacklisted = append(blacklisted, m)
			continue
		}
		require.Equal(t, domain.StatusDLVD, m.Status, "%s (%s): %s", m.ID, r.keyOf(m), m.Error)
		require.False(t, m.Blacklisted, "%s is innocent", r.keyOf(m))
		require.LessOrEqual(t, m.Crashes, 1, "%s: only a poison's first crash can touch an innocent", r.keyOf(m))
	}
	require.Len(t, blacklisted, 2)
	for k := range expected {
		require.Positive(t, r.ledger.times[k], "the receiver never got %s", k)
	}
	for _, q := range r.queues() {
		if q.Name == blacklisted[0].Queue {
			require.NotEqual(t, domain.QueueBlocked, q.State, "blacklisted EO messages do not block their queue")
		}
	}
}
