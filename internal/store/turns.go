package store

import (
	"maps"
	"sync"

	"github.com/queuectl/queuectl/internal/domain"
)

// Turns says, per stage, where the next claim starts, so that queues take
// turns: a claim returns the Turns for the next one.
type Turns map[domain.Stage]string

// ClaimCursor keeps a store's Turns between claims. Both stores use it;
// its zero value starts every stage at its first queue.
type ClaimCursor struct {
	mu   sync.Mutex
	from Turns
}

// Load returns a copy of the cursor's Turns.
func (c *ClaimCursor) Load() Turns {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.from == nil {
		return Turns{}
	}
	return maps.Clone(c.from)
}

// Store keeps t for the next claim.
func (c *ClaimCursor) Store(t Turns) {
	c.mu.Lock()
	c.from = t
	c.mu.Unlock()
}
