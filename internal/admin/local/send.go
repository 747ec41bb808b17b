package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// sendBatch is how many messages one commit stores; concurrent senders'
// batches are grouped further by the store.
const sendBatch = 1000

// Send validates all requests, then stores them in batches of sendBatch.
// Sends are not audited, but a refused one is (§6) — a key repeated with a
// different message included.
func (s *Service) Send(ctx context.Context, reqs []domain.SendRequest) ([]admin.Sent, error) {
	s = s.as(ctx)
	for i := range reqs {
		if err := reqs[i].Validate(s.opts.MaxPayload); err != nil {
			if len(reqs) > 1 {
				err = &admin.RequestError{Index: i, Err: err}
			}
			return nil, s.refused(ctx, "send", nil, domain.AuditError, err)
		}
	}
	if len(reqs) == 0 {
		return nil, s.refused(ctx, "send", nil, domain.AuditError, domain.Invalidf("no messages to send"))
	}
	out := make([]admin.Sent, 0, len(reqs))
	for start := 0; start < len(reqs); start += sendBatch {
		batch := reqs[start:min(start+sendBatch, len(reqs))]
		sent := make([]admin.Sent, len(batch))
		var conflict *keyConflict
		err := s.st.Update(ctx, func(w store.Writer) error {
			// The store may run this again (a retried or regrouped
			// commit): each run starts from nothing.
			conflict = nil
			if err := store.LockQueues(w, s.sendQueues(w, batch), nil); err != nil {
				return err
			}
			keys := keyedSends{}
			for i := range batch {
				r := &batch[i]
				var m *domain.Message
				var err error
				repeat := keys.has(r)
				if !repeat {
					m, err = s.insertInbound(w, r)
					repeat = errors.Is(err, store.ErrKeyExists)
				}
				if repeat {
					// What the key was sent with first decides.
					if m, err = keys.repeat(w, r); err != nil {
						if errors.As(err, &conflict) {
							conflict.index = start + i
						}
						return err
					}
					sent[i] = admin.Sent{Message: m, Duplicate: true}
					continue
				}
				if err != nil {
					return err
				}
				keys.add(r, m)
				sent[i] = admin.Sent{Message: m}
			}
			return nil
		})
		if conflict != nil {
			err = conflict.err
			if len(reqs) > 1 {
				err = &admin.RequestError{Index: conflict.index, Err: err}
			}
			err = s.refused(ctx, "send", []string{conflict.id}, domain.AuditConflict, err)
		}
		if err != nil {
			if start > 0 {
				return out, fmt.Errorf("stored %d of %d messages, then: %w", start, len(reqs), err)
			}
			return nil, err
		}
		out = append(out, sent...)
	}
	return out, nil
}

// sendQueues names the EOIO queues a batch of sends locks — the inbound
// queue of each message and, when the send routes it at once, its
// receivers' — so that the store locks them ahead in one order, before the
// first insert (store.LockQueues): a batch over many app queues that
// locked them in the order of its messages could wait for a transaction
// of the engine that waits for it. The names come from placement as it
// stands; one that placement changes meanwhile (a lane's error queue,
// §10) is locked when it is used.
func (s *Service) sendQueues(w store.Writer, batch []domain.SendRequest) []string {
	params := planned{store.Placing(w)}
	seen := map[string]bool{}
	var names []string
	add := func(q string) {
		if !seen[q] {
			seen[q] = true
			names = append(names, q)
		}
	}
	for _, r := range batch {
		if r.QoS != domain.EOIO {
			continue // EO queues are locked at commit, in name order
		}
		queue, err := s.placer.Inbound(params, r.QoS, r.AppQueue)
		if err != nil {
			continue
		}
		add(queue)
		if !s.opts.RouteAtSend || r.Prepare {
			continue
		}
		m := &domain.Message{QoS: r.QoS, Sender: r.Sender, Receivers: r.Receivers, Interface: r.Interface, AppQueue: r.AppQueue}
		targets, _, err := s.router.Route(params, m)
		if err != nil {
			continue
		}
		for _, tg := range targets {
			add(tg.Queue)
		}
	}
	return names
}

// planned is placement's view of a transaction that reads no queue: the
// names it gives are those of a queue that holds nothing yet, which is
// what a lane's queue is but for its error queue after a switch.
type planned struct{ placement.Params }

func (planned) Occupied(string) (holds, heldUp bool, err error) { return false, false, nil }

// insertInbound builds and stores one inbound message, choosing its queue
// from the tuning values in force now (§3, §7).
func (s *Service) insertInbound(w store.Writer, r *domain.SendRequest) (*domain.Message, error) {
	now := s.opts.Now()
	m := &domain.Message{
		ID:        domain.NewID(),
		QoS:       r.QoS,
		Sender:    r.Sender,
		Receivers: r.Receivers,
		Interface: r.Interface,
		AppQueue:  r.AppQueue,
		Stage:     domain.Inbound,
		Status:    domain.StatusTBDL,
		Headers:   r.Headers,
		Key:       r.Key,
		CreatedAt: now,
		UpdatedAt: now,
	}
	queue, err := s.placer.Inbound(store.Placing(w), r.QoS, r.AppQueue)
	if err != nil {
		return nil, err
	}
	m.Queue = queue
	reason := "sent"
	if r.Prepare {
		m.Status, reason = domain.StatusPEND, "prepared (transactional send)"
	} else if m.Status, err = store.ArrivalStatus(w, queue, r.QoS); err != nil {
		return nil, err
	}
	h := domain.HistoryEntry{At: now, To: m.Status, Actor: s.opts.Actor, Reason: reason}
	if err := w.Insert(m, r.Payload, h); err != nil {
		return nil, err
	}
	return s.routeNow(w, m)
}

// routeNow routes a message just stored, in the send's transaction, when
// its inbound queue would start it at once — not stopped, blocked or
// waiting, nothing ahead of it (§3) — and a receiver is found: the history
// and the order are those of the engine's routing, one write and one
// commit fewer. Otherwise, or when no receiver is found (the engine's
// configuration decides then), the engine routes it.
func (s *Service) routeNow(w store.Writer, m *domain.Message) (*domain.Message, error) {
	if !s.opts.RouteAtSend || m.Status != domain.StatusTBDL {
		return m, nil
	}
	q, err := w.Queue(m.Queue)
	if err != nil {
		return nil, err
	}
	if !q.Starts() || q.Counts[domain.StatusTBDL] > 1 {
		return m, nil
	}
	if wait, err := store.LaneWaits(w, m); wait || err != nil {
		return m, err
	}
	if _, _, err := s.router.Route(store.Placing(w), m); err != nil {
		return m, nil
	}
	res, err := w.Route(store.RouteParams{ID: m.ID, Router: s.router,
		Entry: store.EngineEntry(m.CreatedAt, store.Node{}, "")})
	if err != nil {
		return nil, err
	}
	return res.Message, nil
}
