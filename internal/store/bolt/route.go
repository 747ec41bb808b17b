package bolt

import (
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

// route does receiver determination for one inbound message (store.Route
// decides; these are bbolt's writes). base is the history entries' time,
// node and actor.
func (t *txn) route(key uuid.UUID, in storedMessage, router *placement.Router, base domain.HistoryEntry) (*store.RouteResult, error) {
	return store.Route(t, in.Message, router, base, store.RouteWrites{
		Reject: func(rerr error, h domain.HistoryEntry) (*domain.Message, error) {
			dlng, ndlv := h, h
			dlng.Reason, ndlv.Reason = "receiver determination", "permanent error: "+rerr.Error()
			return t.move(key, in, func(m *domain.Message) {
				m.Attempts++
				m.Error, m.ErrorClass = rerr.Error(), domain.ErrorPermanent
			}, step{domain.StatusDLNG, dlng}, step{domain.StatusNDLV, ndlv})
		},
		Divert: t.divert,
		Forward: func(tg placement.Target, h domain.HistoryEntry) (*domain.Message, error) {
			return t.forward(key, in, tg, h)
		},
		Child: func(m *domain.Message, h domain.HistoryEntry) error {
			return t.insertShared(m, h, in.legacyPayload)
		},
		Split: func(n int, h domain.HistoryEntry) (*domain.Message, error) {
			if err := t.addPayloadRefs(key, n); err != nil {
				return nil, err
			}
			dlng := h
			dlng.Reason = "receiver determination"
			return t.move(key, in, func(m *domain.Message) { m.Attempts++ },
				step{domain.StatusDLNG, dlng}, step{domain.StatusDLVD, h})
		},
	})
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
	entries, err := t.historyOf(key, cur)
	if err != nil {
		return nil, err
	}
	if entries, err = appendHistoryEntry(entries, h); err != nil {
		return nil, fmt.Errorf("message %s: encode history: %w", cur.ID, err)
	}
	if err := t.putWithHistory(key, cur, next, entries); err != nil {
		return nil, err
	}
	if err := t.reindex(key, cur.Message, next); err != nil {
		return nil, err
	}
	count(from, cur.Message, -1)
	store.CountPassedThrough(from, 1)
	if err := t.addPassed(from.Name, 1); err != nil {
		return nil, err
	}
	count(to, next, 1)
	if err := t.putQueue(from); err != nil {
		return nil, err
	}
	return next, t.putQueue(to)
}
