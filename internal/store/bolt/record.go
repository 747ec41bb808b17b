package bolt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Record applies a batch of outcomes and, in the same transaction, claims.
func (s *Store) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	var out *store.RecordResult
	var next string
	err := s.engineUpdate(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		out = &store.RecordResult{Applied: make([]*domain.Message, len(p.Outcomes))}
		at := t.now()
		touched := map[string]bool{}
		for i, o := range p.Outcomes {
			after, created, err := t.apply(p.Node, o, at)
			if errors.Is(err, domain.ErrConflict) {
				if out.Conflicts == nil {
					out.Conflicts = map[string]error{}
				}
				out.Conflicts[o.ID] = err
				continue
			}
			if err != nil {
				return err
			}
			out.Applied[i] = after
			out.Created = append(out.Created, created...)
			if after.QoS == domain.EOIO {
				touched[after.Queue] = true
			}
		}
		// The HOLD rule once per queue, after all of the batch's outcomes.
		for q := range touched {
			if err := store.RestoreHold(t, q, store.EngineEntry(at, p.Node, "")); err != nil {
				return err
			}
		}
		if p.Claim == nil {
			return nil
		}
		var err error
		out.Claim, next, err = t.claim(*p.Claim, s.claimStart())
		return err
	})
	if err == nil && p.Claim != nil {
		s.setClaimStart(next)
	}
	return out, err
}

// apply records one outcome: a compare-and-set on DLNG, the claiming
// incarnation and the lease epoch.
func (t *txn) apply(node store.Node, o store.Outcome, at time.Time) (*domain.Message, []*domain.Message, error) {
	cur, key, err := t.lookup(o.ID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil, domain.Conflictf("message %s: it no longer exists", o.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case cur.Status != domain.StatusDLNG:
		return nil, nil, domain.Conflictf("message %s: status is %s, expected DLNG", o.ID, cur.Status)
	case cur.Node != node.ID || cur.Incarnation != node.Incarnation:
		return nil, nil, domain.Conflictf("message %s: it is DLNG for node %s incarnation %d, not %s incarnation %d",
			o.ID, cur.Node, cur.Incarnation, node.ID, node.Incarnation)
	case o.Epoch != t.epoch():
		return nil, nil, fmt.Errorf("message %s: lease epoch %d, the queue's is %d: %w", o.ID, o.Epoch, t.epoch(), store.ErrFenced)
	}
	h := store.EngineEntry(at, node, o.Reason)
	settled := func(m *domain.Message) { m.Node, m.Incarnation = "", 0 }
	switch o.Kind {
	case store.OutcomeDelivered:
		if h.Reason == "" {
			h.Reason = "delivered"
		}
		after, err := t.transition(key, cur, domain.StatusDLVD, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass = "", ""
		}, h)
		return after, nil, err
	case store.OutcomeRetry, store.OutcomeFailed:
		to, next := domain.StatusNDLV, (*time.Time)(nil)
		if o.Kind == store.OutcomeRetry {
			due := at.Add(o.RetryIn)
			to, next = domain.StatusWAIT, &due
		}
		if h.Reason == "" {
			h.Reason = string(o.Class) + " error: " + o.Error
		}
		after, err := t.transition(key, cur, to, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass, m.NextAttemptAt = o.Error, o.Class, next
		}, h)
		return after, nil, err
	case store.OutcomeHandBack:
		if h.Reason == "" {
			h.Reason = "handed back at shutdown"
		}
		after, err := t.transition(key, cur, domain.StatusTBDL, func(m *domain.Message) {
			settled(m)
			m.Attempts = max(0, m.Attempts-1)
		}, h)
		return after, nil, err
	case store.OutcomeRouted:
		return t.route(key, cur, o, h)
	}
	return nil, nil, fmt.Errorf("message %s: outcome kind %d is unknown", o.ID, o.Kind)
}

// route makes a routed inbound message DLVD and creates its outbound
// messages, which share its payload.
func (t *txn) route(key [16]byte, in storedMessage, o store.Outcome, h domain.HistoryEntry) (*domain.Message, []*domain.Message, error) {
	if in.Stage != domain.Inbound || len(o.Routes) == 0 {
		return nil, nil, fmt.Errorf("message %s: a routed outcome needs an inbound message and routes", in.ID)
	}
	created := make([]*domain.Message, 0, len(o.Routes))
	receivers := make([]string, 0, len(o.Routes))
	for _, r := range o.Routes {
		status, err := store.ArrivalStatus(t, r.Queue, in.QoS)
		if err != nil {
			return nil, nil, err
		}
		out := &domain.Message{
			ID: domain.NewID(), QoS: in.QoS, Sender: in.Sender, Receiver: r.Receiver, Interface: in.Interface,
			AppQueue: in.AppQueue, Queue: r.Queue, Stage: domain.Outbound, Status: status,
			ParentID: in.ID, Headers: in.Headers, Size: in.Size, CreatedAt: h.At, UpdatedAt: h.At,
		}
		if in.sharedPayload {
			return nil, nil, fmt.Errorf("message %s: an inbound message owns its payload", in.ID)
		}
		if err := t.insertShared(out, store.EngineEntry(h.At, store.Node{ID: h.Node}, "receiver determination")); err != nil {
			return nil, nil, err
		}
		created = append(created, out)
		receivers = append(receivers, r.Receiver)
	}
	if h.Reason == "" {
		h.Reason = "routed to " + strings.Join(receivers, ", ")
	}
	after, err := t.transition(key, in, domain.StatusDLVD, func(m *domain.Message) {
		m.Node, m.Incarnation, m.Error, m.ErrorClass = "", 0, "", ""
	}, h)
	return after, created, err
}
