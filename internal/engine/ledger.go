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
	// claiming is held shared by a worker's step from before its store
	// call until what it claimed is added, and exclusively by a
	// reconciliation: the workers claim on goroutines of their own too.
	claiming sync.RWMutex
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

// settle lets go of ids, once their outcomes are recorded (or refused),
// and notes what the transaction that recorded them claimed, at once: the
// ledger never looks emptier than the node is. It returns what the ledger
// held of each id. A message may be in both (a retry claimed again).
func (l *ledger) settle(ids []string, claimed []store.Claimed) []*claim {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*claim, len(ids))
	for i, id := range ids {
		out[i] = l.held[id]
		delete(l.held, id)
	}
	for _, c := range claimed {
		l.held[c.Message.ID] = &claim{Claimed: c}
	}
	return out
}

// alone reports whether id is all the node holds.
func (l *ledger) alone(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[id]
	return ok && len(l.held) == 1
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
