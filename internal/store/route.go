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

// RouteWrites are one store's writes for the three outcomes of a receiver
// determination; Route decides which ones run.
type RouteWrites struct {
	// Reject makes the message NDLV: no receiver was found (err says why).
	// h carries the time, node and actor of the entries to write.
	Reject func(err error, h domain.HistoryEntry) (*domain.Message, error)
	// Divert moves an NDLV message on to its error queue, if one is
	// configured (Divert of this package).
	Divert func(m *domain.Message, h domain.HistoryEntry) (*domain.Message, error)
	// Forward moves the message on to its one receiver's queue, with h as
	// the history entry.
	Forward func(tg placement.Target, h domain.HistoryEntry) (*domain.Message, error)
	// Child stores one of the messages a split makes, sharing the payload
	// of the message it came from.
	Child func(out *domain.Message, h domain.HistoryEntry) error
	// Split ends the message DLVD once its n children are stored.
	Split func(n int, h domain.HistoryEntry) (*domain.Message, error)
}

// Route does receiver determination for TBDL inbound message in (§3) in the
// transaction of tx: one receiver moves it on under its id, several split
// it into children (each TBDL, or HOLD behind a blocked EOIO head), none
// makes it NDLV. base is the time, node and actor of the history entries.
func Route(tx Writer, in *domain.Message, router *placement.Router, base domain.HistoryEntry, w RouteWrites) (*RouteResult, error) {
	entry := func(reason string) domain.HistoryEntry {
		h := base
		h.Reason = reason
		return h
	}
	targets, reason, rerr := router.Route(Placing(tx), in)
	switch {
	case rerr != nil:
		after, err := w.Reject(rerr, entry(""))
		if err != nil {
			return nil, err
		}
		// An NDLV inbound EOIO message holds up its queue: what arrives
		// behind it waits HOLD.
		queue := after.Queue
		if after, err = w.Divert(after, entry("")); err != nil {
			return nil, err
		}
		if err := RestoreHold(tx, queue, entry("held behind "+after.ID+" (NDLV)")); err != nil {
			return nil, err
		}
		return &RouteResult{Message: after}, nil
	case len(targets) == 1:
		after, err := w.Forward(targets[0], entry(RoutedReason(reason, targets[0].Queue)))
		if err != nil {
			return nil, err
		}
		return &RouteResult{Message: after}, nil
	}
	res := &RouteResult{}
	for _, tg := range targets {
		status, err := ArrivalStatus(tx, tg.Queue, in.QoS)
		if err != nil {
			return nil, err
		}
		out := &domain.Message{
			ID: domain.NewID(), QoS: in.QoS, Sender: in.Sender, Receiver: tg.Receiver, Interface: in.Interface,
			AppQueue: in.AppQueue, Queue: tg.Queue, Stage: domain.Outbound, Status: status,
			ParentID: in.ID, Headers: in.Headers, Size: in.Size, CreatedAt: base.At, UpdatedAt: base.At,
		}
		if err := w.Child(out, entry("receiver determination")); err != nil {
			return nil, err
		}
		res.Created = append(res.Created, out)
	}
	after, err := w.Split(len(targets), entry(SplitReason(reason, len(targets))))
	if err != nil {
		return nil, err
	}
	res.Message = after
	return res, nil
}
