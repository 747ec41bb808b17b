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

// route does receiver determination for one inbound message (store.Route
// decides; these are PostgreSQL's writes). base is the history entries'
// time, node and actor. The writes are held back (t.pend): the
// transaction's next statement takes them along, set-based with those of
// the other messages routed, so routing costs no round trip per message.
func (t *txn) route(in *storedMessage, router *placement.Router, base domain.HistoryEntry) (*store.RouteResult, error) {
	attempt := func(m *domain.Message) { m.Attempts++ }
	dlng := func(h domain.HistoryEntry) (*storedMessage, error) {
		h.Reason = "receiver determination"
		mid, err := t.change(in, domain.StatusDLNG, attempt, h)
		if err != nil {
			return nil, err
		}
		return &storedMessage{Message: mid, payloadID: in.payloadID}, nil
	}
	return store.Route(t, in.Message, router, base, store.RouteWrites{
		Reject: func(rerr error, h domain.HistoryEntry) (*domain.Message, error) {
			mid, err := dlng(h)
			if err != nil {
				return nil, err
			}
			ndlv := h
			ndlv.Reason = "permanent error: " + rerr.Error()
			return t.change(mid, domain.StatusNDLV, func(m *domain.Message) {
				m.Error, m.ErrorClass = rerr.Error(), domain.ErrorPermanent
			}, ndlv)
		},
		Divert: t.divert,
		Forward: func(tg placement.Target, h domain.HistoryEntry) (*domain.Message, error) {
			return t.forward(in, tg, h)
		},
		Child: func(out *domain.Message, h domain.HistoryEntry) error {
			return t.insertShared(out, in.payloadID, h)
		},
		Split: func(n int, h domain.HistoryEntry) (*domain.Message, error) {
			if n > 0 {
				t.pend.addRefs(in.payloadID, int64(n))
			}
			mid, err := dlng(h)
			if err != nil {
				return nil, err
			}
			return t.change(mid, domain.StatusDLVD, nil, h)
		},
	})
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
