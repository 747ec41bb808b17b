package admin

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// EOIO is the switch procedure of §10: how many queues EOIO app queues are
// hashed into.
type EOIO interface {
	// EOIOStatus reports the switch state and the queues that still drain.
	EOIOStatus(ctx context.Context) (*EOIOStatus, error)
	// EOIOSwitch switches EOIO to a new set of queues with the other prefix
	// (XBQ ↔ XB2): p.Queues per stage, or one per app queue with 0. It is
	// refused while the old set of the last switch still holds messages,
	// and when the current set has that many queues already. Like Tune, it
	// checks the value itself and audits every refusal. The HTTP API lets
	// only admins call it.
	EOIOSwitch(ctx context.Context, p EOIOSwitchParams) (*EOIOStatus, error)
}

// EOIOSwitchParams describe one switch.
type EOIOSwitchParams struct {
	// Queues is the number of queues per stage as the operator wrote it:
	// a whole number from 0 (one queue per app queue) to
	// domain.MaxEOIOQueues.
	Queues string
}

// The switch states of §10.
const (
	// EOIOInactive: one queue per app queue, and nothing left to drain.
	EOIOInactive = "inactive"
	// EOIOStarted: a switch was made and the old set's queues still hold
	// messages; new messages go to the new set, which starts an app queue's
	// messages only once the app queue has none left in the old set.
	EOIOStarted = "started"
	// EOIOActive: app queues share N queues per stage, and nothing is left
	// to drain.
	EOIOActive = "active"
)

// EOIOStatus is what `eoio status` shows.
type EOIOStatus struct {
	State   string         `json:"state" yaml:"state"`
	Current domain.EOIOSet `json:"current" yaml:"current"`
	// Old is the set before the last switch; null before the first.
	Old        *domain.EOIOSet `json:"old" yaml:"old"`
	SwitchedAt *time.Time      `json:"switched_at" yaml:"switched_at"`
	SwitchedBy string          `json:"switched_by" yaml:"switched_by"`
	// Draining are the old set's queues that still hold messages.
	Draining QueueGroup `json:"draining" yaml:"draining"`
	// ErrorQueues are the error queues that hold messages.
	ErrorQueues QueueGroup `json:"error_queues" yaml:"error_queues"`
}

// QueueGroup counts queues that hold messages, and names the first of them.
type QueueGroup struct {
	Queues   int   `json:"queues" yaml:"queues"`
	Messages int64 `json:"messages" yaml:"messages"`
	// Names lists the first MaxGroupNames queues in name order.
	Names []string `json:"names" yaml:"names"`
}

// MaxGroupNames bounds the queue names a QueueGroup lists; `queue list
// --name` lists them all.
const MaxGroupNames = 20

// Add counts a queue with depth open messages.
func (g *QueueGroup) Add(name string, depth int64) {
	g.Queues++
	g.Messages += depth
	if len(g.Names) < MaxGroupNames {
		g.Names = append(g.Names, name)
	}
}
