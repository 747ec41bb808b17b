package postgres

import (
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// Route does receiver determination for one TBDL inbound message (§3).
func (t *txn) Route(p store.RouteParams) (*store.RouteResult, error) {
	cur, err := t.pend.inserted(p.ID)
	if cur == nil && err == nil {
		cur, err = t.message(p.ID)
	}
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
		if p.Entry.At, err = t.now(); err != nil {
			return nil, err
		}
	}
	return t.route(cur, p.Router, p.Entry)
}

// route does receiver determination for one inbound message: with one
// receiver, it moves on to that receiver's queue, keeping its id (forward);
// with several, it ends DLVD, split into one message per receiver, sharing
// its payload; with none, it is NDLV. base is the history entries' time,
// node and actor. The writes are held back (t.pend): the transaction's next
// statement takes them along, set-based with those of the other messages
// routed, so routing costs no round trip per message.
func (t *txn) route(in *storedMessage, router *placement.Router, base domain.HistoryEntry) (*store.RouteResult, error) {
	entry := func(reason string) domain.HistoryEntry {
		h := base
		h.Reason = reason
		return h
	}
	attempt := func(m *domain.Message) { m.Attempts++ }
	targets, reason, rerr := router.Route(store.Placement(t), in.Message)
	switch {
	case rerr != nil:
		mid, err := t.change(in, domain.StatusDLNG, attempt, entry("receiver determination"))
		if err != nil {
			return nil, err
		}
		after, err := t.change(&storedMessage{Message: mid, payloadID: in.payloadID}, domain.StatusNDLV, func(m *domain.Message) {
			m.Error, m.ErrorClass = rerr.Error(), domain.ErrorPermanent
		}, entry("permanent error: "+rerr.Error()))
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
		after, err := t.forward(in, targets[0], entry(store.RoutedReason(reason, targets[0].Queue)))
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
		if err := t.insertShared(out, in.payloadID, entry("receiver determination")); err != nil {
			return nil, err
		}
		res.Created = append(res.Created, out)
	}
	if len(targets) > 0 {
		t.pend.addRefs(in.payloadID, int64(len(targets)))
	}
	mid, err := t.change(in, domain.StatusDLNG, attempt, entry("receiver determination"))
	if err != nil {
		return nil, err
	}
	after, err := t.change(&storedMessage{Message: mid, payloadID: in.payloadID}, domain.StatusDLVD, nil,
		entry(store.SplitReason(reason, len(targets))))
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
func (t *txn) forward(cur *storedMessage, tg placement.Target, h domain.HistoryEntry) (*domain.Message, error) {
	from := t.queues[cur.Queue]
	next := cur.Clone()
	next.Queue, next.Stage, next.Receiver, next.InboundQueue = tg.Queue, domain.Outbound, tg.Receiver, cur.Queue
	next.UpdatedAt, next.History = h.At, nil
	storedTimes(next)
	to, _, err := t.queueFor(next)
	if err != nil {
		return nil, err
	}
	if next.Status, err = store.ArrivalStatus(t, tg.Queue, next.QoS); err != nil {
		return nil, err
	}
	nt := cloneQueue(to)
	if next.Seq, err = t.nextSeq(nt); err != nil {
		return nil, err
	}
	h.From, h.To = cur.Status, next.Status
	h.At = storedTime(h.At)
	uid, _ := parseID(cur.ID)
	t.pend.update(uid, cur.Message, next, h)
	nf := cloneQueue(from)
	t.count(nf, cur.Message, -1)
	store.CountPassedThrough(nf, 1)
	t.queues[cur.Queue], t.queues[tg.Queue] = nf, nt
	t.count(nt, next, 1)
	t.ready(next)
	return next, nil
}
