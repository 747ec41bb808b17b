package store

import (
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// RouteParams describe the receiver determination of one TBDL inbound
// message (§3) outside a claim: by the send that stored it, when its
// inbound queue would start it at once.
type RouteParams struct {
	ID     string
	Router *placement.Router
	// Entry is the time, node and actor of the history entries routing
	// writes; the store fills in the reasons.
	Entry domain.HistoryEntry
}

// RouteResult is what a receiver determination did.
type RouteResult struct {
	// Message is the message as stored after: moved on to its receiver's
	// queue (TBDL or HOLD) when it has one receiver, DLVD when it was
	// split between several, NDLV when no receiver was found.
	Message *domain.Message
	// Created are the messages a split made, one per receiver.
	Created []*domain.Message
}

// RoutedReason is the history entry's reason of a message that routing
// moved on to queue.
func RoutedReason(determination, queue string) string {
	return fmt.Sprintf("%s; moved on to %s", determination, queue)
}

// SplitReason is the history entry's reason of a message that routing split
// into n, one per receiver.
func SplitReason(determination string, n int) string {
	return fmt.Sprintf("%s; split into %d", determination, n)
}

// CountPassedThrough counts n messages that routing moved on from inbound
// queue q, or, with -n, n of them purged: a queue's counters count what
// passed through it, so a message moved on counts as DLVD in its inbound
// queue as long as it is kept (§3).
func CountPassedThrough(q *QueueRecord, n int64) {
	q.Counts[domain.StatusDLVD] += n
	if q.Counts[domain.StatusDLVD] == 0 {
		delete(q.Counts, domain.StatusDLVD)
	}
}
