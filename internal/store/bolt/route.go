package bolt

import (
	"bytes"
	"fmt"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// Route does receiver determination for one TBDL inbound message (§3).
func (t *txn) Route(p store.RouteParams) (*store.RouteResult, error) {
	cur, key, err := t.lookup(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, []domain.Status{domain.StatusTBDL}); err != nil {
		return nil, err
	}
	if cur.Stage != domain.Inbound {
		return nil, domain.Invalidf("message %s is in its receiver's queue %s already", p.ID, cur.Queue)
	}
	if p.Entry.At.IsZero() {
		p.Entry.At = t.now()
	}
	return t.route(key, cur, p.Router, p.Entry)
}

// route does receiver determination for one inbound message: with one
// receiver, it moves on to that receiver's queue, keeping its id (forward);
// with several, it ends DLVD, split into one message per receiver, sharing
// its payload; with none, it is NDLV. base is the history entries' time,
// node and actor.
func (t *txn) route(key uuid.UUID, in storedMessage, router *placement.Router, base domain.HistoryEntry) (*store.RouteResult, error) {
	entry := func(reason string) domain.HistoryEntry {
		h := base
		h.Reason = reason
		return h
	}
	targets, reason, rerr := router.Route(store.Placement(t), in.Message)
	switch {
	case rerr != nil:
		after, err := t.move(key, in, func(m *domain.Message) {
			m.Attempts++
			m.Error, m.ErrorClass = rerr.Error(), domain.ErrorPermanent
		}, step{domain.StatusDLNG, entry("receiver determination")},
			step{domain.StatusNDLV, entry("permanent error: " + rerr.Error())})
		if err != nil {
			return nil, err
		}
		queue := after.Queue
		if after, err = t.divert(after, entry("")); err != nil {
			return nil, err
		}
		if err := store.RestoreHold(t, queue, entry("held behind "+after.ID+" (NDLV)")); err != nil {
			return nil, err
		}
		return &store.RouteResult{Message: after}, nil
	case len(targets) == 1:
		after, err := t.forward(key, in, targets[0], entry(store.RoutedReason(reason, targets[0].Queue)))
		if err != nil {
			return nil, err
		}
		return &store.RouteResult{Message: after}, nil
	}
	res := &store.RouteResult{}
	for _, tg := range targets {
		status, err := store.ArrivalStatus(t, tg.Queue, in.QoS)
		if err != nil {
			return nil, err
		}
		out := &domain.Message{
			ID: domain.NewID(), QoS: in.QoS, Sender: in.Sender, Receiver: tg.Receiver, Interface: in.Interface,
			AppQueue: in.AppQueue, Queue: tg.Queue, Stage: domain.Outbound, Status: status,
			ParentID: in.ID, Headers: in.Headers, Size: in.Size, CreatedAt: base.At, UpdatedAt: base.At,
		}
		if err := t.insertShared(out, entry("receiver determination")); err != nil {
			return nil, err
		}
		res.Created = append(res.Created, out)
	}
	if err := t.addPayloadRefs(key, len(targets)); err != nil {
		return nil, err
	}
	after, err := t.move(key, in, func(m *domain.Message) { m.Attempts++ },
		step{domain.StatusDLNG, entry("receiver determination")},
		step{domain.StatusDLVD, entry(store.SplitReason(reason, len(targets)))})
	if err != nil {
		return nil, err
	}
	res.Message = after
	return res, nil
}

// forward moves an inbound message on to its one receiver's outbound queue
// (§3: one message, one id): its queue, stage, receiver and seq change in
// one write, its status is what the queue takes arrivals in (TBDL, or HOLD
// behind a blocked EOIO head), and its inbound queue counts it DLVD.
func (t *txn) forward(key uuid.UUID, cur storedMessage, tg placement.Target, h domain.HistoryEntry) (*domain.Message, error) {
	from, err := t.queue(cur.Queue)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", cur.ID, err)
	}
	next := cur.Clone()
	next.Queue, next.Stage, next.Receiver, next.InboundQueue = tg.Queue, domain.Outbound, tg.Receiver, cur.Queue
	next.Seq, next.UpdatedAt, next.History = 0, h.At, nil
	storedTimes(next)
	to, err := t.queueFor(next, h)
	if err != nil {
		return nil, err
	}
	if next.Status, err = store.ArrivalStatus(t, tg.Queue, next.QoS); err != nil {
		return nil, err
	}
	to.LastSeq++
	next.Seq = to.LastSeq
	h.From, h.To = cur.Status, next.Status
	hist := t.bucket(bucketHistory)
	entries, err := appendHistoryEntry(bytes.Clone(hist.Get(key[:])), h)
	if err != nil {
		return nil, fmt.Errorf("message %s: encode history: %w", cur.ID, err)
	}
	if err := hist.Put(key[:], entries); err != nil {
		return nil, fmt.Errorf("message %s: store history: %w", cur.ID, err)
	}
	if err := t.putMessage(key, next, cur.sharedPayload); err != nil {
		return nil, err
	}
	if err := t.reindex(key, cur.Message, next); err != nil {
		return nil, err
	}
	count(from, cur.Message, -1)
	store.CountPassedThrough(from, 1)
	count(to, next, 1)
	if err := t.putQueue(from); err != nil {
		return nil, err
	}
	return next, t.putQueue(to)
}
