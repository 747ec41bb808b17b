package bolt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Record applies a batch of outcomes and, in the same transaction, claims.
func (s *Store) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	var out *store.RecordResult
	var next turns
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		out = &store.RecordResult{Applied: make([]*domain.Message, len(p.Outcomes))}
		at := t.now()
		touched := map[string]bool{}
		for i, o := range p.Outcomes {
			after, err := t.apply(p.Node, o, at)
			var unreadable *unreadableError
			if errors.As(err, &unreadable) {
				if out.Damaged == nil {
					out.Damaged = map[string]error{}
				}
				out.Damaged[o.ID] = unreadable.err
				continue
			}
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
			if after.QoS == domain.EOIO {
				touched[after.Queue] = true
				if after, err = t.divert(after, store.EngineEntry(at, p.Node, "")); err != nil {
					return err
				}
			}
			out.Applied[i] = after
		}
		// The HOLD rule once per queue, after all of the batch's outcomes
		// and the moves to error queues they caused.
		for q := range touched {
			if err := store.RestoreHold(t, q, store.EngineEntry(at, p.Node, "")); err != nil {
				return err
			}
		}
		if p.Claim == nil {
			return nil
		}
		var err error
		out.Claim, next, err = t.claim(*p.Claim, s.claims.Load())
		return err
	})
	if err == nil && p.Claim != nil {
		s.claims.Store(next)
	}
	return out, err
}

// apply records one outcome: a compare-and-set on DLNG, the claiming
// incarnation and the lease epoch.
func (t *txn) apply(node store.Node, o store.Outcome, at time.Time) (*domain.Message, error) {
	cur, key, err := t.lookup(o.ID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Conflictf("message %s: it no longer exists", o.ID)
	}
	if err != nil {
		// A record that cannot be read changes nothing and stops nothing:
		// the message stays DLNG, for recovery.
		return nil, &unreadableError{err: fmt.Errorf("message %s: %w", o.ID, err)}
	}
	switch {
	case cur.Status != domain.StatusDLNG:
		return nil, domain.Conflictf("message %s: status is %s, expected DLNG", o.ID, cur.Status)
	case cur.Node != node.ID || cur.Incarnation != node.Incarnation:
		return nil, domain.Conflictf("message %s: it is DLNG for node %s incarnation %d, not %s incarnation %d",
			o.ID, cur.Node, cur.Incarnation, node.ID, node.Incarnation)
	case o.Epoch != t.epoch():
		return nil, fmt.Errorf("message %s: lease epoch %d, the queue's is %d: %w", o.ID, o.Epoch, t.epoch(), store.ErrFenced)
	}
	h := store.EngineEntry(at, node, o.Reason)
	settled := func(m *domain.Message) { m.Node, m.Incarnation = "", 0 }
	switch o.Kind {
	case store.OutcomeDelivered:
		if h.Reason == "" {
			h.Reason = "delivered"
		}
		return t.transition(key, cur, domain.StatusDLVD, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass = "", ""
		}, h)
	case store.OutcomeRetry, store.OutcomeFailed:
		to, next := domain.StatusNDLV, (*time.Time)(nil)
		if o.Kind == store.OutcomeRetry {
			due := at.Add(o.RetryIn)
			to, next = domain.StatusWAIT, &due
		}
		if h.Reason == "" {
			h.Reason = string(o.Class) + " error: " + o.Error
		}
		return t.transition(key, cur, to, func(m *domain.Message) {
			settled(m)
			m.Error, m.ErrorClass, m.NextAttemptAt = o.Error, o.Class, next
		}, h)
	case store.OutcomeHandBack:
		if h.Reason == "" {
			h.Reason = "handed back at shutdown"
		}
		return t.transition(key, cur, domain.StatusTBDL, func(m *domain.Message) {
			settled(m)
			m.Attempts = max(0, m.Attempts-1)
		}, h)
	}
	return nil, fmt.Errorf("message %s: outcome kind %d is unknown", o.ID, o.Kind)
}

// divert moves a message that failed, and those of its lane after it, to
// its error queue when §10 says so (store.Divert), and returns the message
// as stored after.
func (t *txn) divert(m *domain.Message, h domain.HistoryEntry) (*domain.Message, error) {
	errorQueue, err := store.Divert(t, m, h)
	if err != nil || errorQueue == "" {
		return m, err
	}
	return t.Message(m.ID)
}

// unreadableError is an outcome's message that cannot be read.
type unreadableError struct{ err error }

func (e *unreadableError) Error() string { return e.err.Error() }
