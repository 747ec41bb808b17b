package engine

import (
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// ledger is what the node knows it holds DLNG: every message a claim of
// this incarnation returned, until its outcome is recorded. Claims happen
// on two goroutines — the loop's own, and the completer's, whose outcomes
// of EOIO messages claim their queues' next heads — and each adds what it
// claimed before it does anything else, so that a reconciliation, which
// runs while no claim is under way, hands back only what no one knows of.
type ledger struct {
	mu   sync.Mutex
	held map[string]*claim
}

// claim is a message this node has DLNG.
type claim struct {
	store.Claimed
	// took is how long its delivery took, once it finished.
	took time.Duration
}

func newLedger() *ledger {
	return &ledger{held: map[string]*claim{}}
}

// add notes the messages a claim returned.
func (l *ledger) add(claimed []store.Claimed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range claimed {
		l.held[c.Message.ID] = &claim{Claimed: c}
	}
}

// finished notes how long the delivery of id took.
func (l *ledger) finished(id string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.held[id]; ok {
		c.took = took
	}
}

// remove lets go of id, once its outcome is recorded (or refused), and
// returns what the ledger held of it.
func (l *ledger) remove(id string) *claim {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.held[id]
	delete(l.held, id)
	return c
}

// has reports whether the node holds id.
func (l *ledger) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[id]
	return ok
}

// ids lists what the node holds.
func (l *ledger) ids() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.held))
	for id := range l.held {
		ids = append(ids, id)
	}
	return ids
}

// len is how many messages the node holds.
func (l *ledger) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// claims returns what the node holds.
func (l *ledger) claims() []store.Claimed {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]store.Claimed, 0, len(l.held))
	for _, c := range l.held {
		out = append(out, c.Claimed)
	}
	return out
}
