package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// A batch of outcomes is one transaction: one outcome the store cannot
// record (a divert that fails, a write the database refuses) would fail
// the batch, and the completer would retry it forever while the batch
// grows behind it. So a batch that fails for a reason that may be one
// message's is split until the message is found; every other outcome is
// recorded, and the one that fails alone is parked: NDLV, with why.

// splitResult is what recordSplitting did with a batch.
type splitResult struct {
	*store.RecordResult
	// parked holds, by place in the batch, the outcome that was recorded
	// in place of one that could not be: the message went NDLV.
	parked map[int]store.Outcome
	// split says the batch was recorded apart, without its claim.
	split bool
}

// recordSplitting records p as Store.Record does. When the batch fails for
// a reason that may concern one message, it records its halves apart (the
// claim of p is dropped: the loop claims for the workers it kept), down to
// the outcome that fails alone, which it parks. An outcome whose message
// can be neither recorded nor parked is left DLNG, for recovery, and named
// in Damaged.
func (e *Engine) recordSplitting(ctx context.Context, p store.RecordParams) (*splitResult, error) {
	res, err := e.recordOnce(ctx, p)
	if err == nil || !oneMessages(ctx, err) {
		return &splitResult{RecordResult: res}, err
	}
	e.log.Warn("a batch of outcomes failed; recording them apart to find the one that fails",
		"outcomes", len(p.Outcomes), "err", err)
	out := &splitResult{RecordResult: &store.RecordResult{Applied: make([]*domain.Message, len(p.Outcomes))}, split: true}
	if err := e.recordApart(ctx, p.Node, p.Outcomes, 0, err, out); err != nil {
		return nil, err
	}
	return out, nil
}

// recordApart records outcomes, which are at places from on in the batch
// of out and failed together with err, in halves, down to one.
func (e *Engine) recordApart(ctx context.Context, node store.Node, outcomes []store.Outcome, from int, err error,
	out *splitResult) error {
	if len(outcomes) == 1 {
		// Once more alone, so that a passing failure (a deadlock the
		// store's own retries did not outlast) parks nothing.
		res, again := e.recordOnce(ctx, store.RecordParams{Node: node, Outcomes: outcomes})
		switch {
		case again == nil:
			merge(out, res, from)
		case oneMessages(ctx, again):
			e.park(ctx, node, outcomes[0], from, again, out)
		default:
			return again
		}
		return nil
	}
	half := len(outcomes) / 2
	for _, part := range []struct {
		outcomes []store.Outcome
		from     int
	}{{outcomes[:half], from}, {outcomes[half:], from + half}} {
		res, err := e.recordOnce(ctx, store.RecordParams{Node: node, Outcomes: part.outcomes})
		switch {
		case err == nil:
			merge(out, res, part.from)
		case oneMessages(ctx, err):
			if err := e.recordApart(ctx, node, part.outcomes, part.from, err, out); err != nil {
				return err
			}
		default:
			// The store itself failed: the completer keeps the batch and
			// tries again; what was recorded meanwhile is refused then as
			// recorded already.
			return err
		}
	}
	return nil
}

// recordOnce is one Record, bounded as every store call is.
func (e *Engine) recordOnce(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	sctx, cancel := e.storeContext(ctx)
	defer cancel()
	return e.st.Record(sctx, p)
}

// merge copies what res did with the outcomes at places from on into out.
func merge(out *splitResult, res *store.RecordResult, from int) {
	copy(out.Applied[from:], res.Applied)
	for id, err := range res.Conflicts {
		if out.Conflicts == nil {
			out.Conflicts = map[string]error{}
		}
		out.Conflicts[id] = err
	}
	for id, err := range res.Damaged {
		if out.Damaged == nil {
			out.Damaged = map[string]error{}
		}
		out.Damaged[id] = err
	}
}

// oneMessages reports whether err, the failure of a batch, may concern one
// of its messages rather than the store: damage, or anything but an outage,
// a fenced or overdue node, or the end of ctx.
func oneMessages(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, store.ErrFenced) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, store.ErrDamaged) || !errors.Is(err, domain.ErrUnavailable)
}

// park records o, whose outcome failed alone with cause, as NDLV with the
// reason, in a transaction of its own that checks the message is still
// this incarnation's DLNG (and restores the HOLD rule of its queue). When
// even that fails, the message is left DLNG for recovery.
func (e *Engine) park(ctx context.Context, node store.Node, o store.Outcome, at int, cause error, out *splitResult) {
	reason := fmt.Sprintf("its outcome (%s) could not be recorded: %v", outcomeName(o.Kind), cause)
	var parked *domain.Message
	sctx, cancel := e.storeContext(ctx)
	err := e.st.Update(sctx, func(w store.Writer) error {
		cur, err := w.Message(o.ID)
		if err != nil {
			return err
		}
		if cur.Status != domain.StatusDLNG || cur.Node != node.ID || cur.Incarnation != node.Incarnation {
			return domain.Conflictf("message %s: status %s on node %s incarnation %d, not DLNG on %s incarnation %d",
				o.ID, cur.Status, cur.Node, cur.Incarnation, node.ID, node.Incarnation)
		}
		// At zero: the store's clock.
		h := store.EngineEntry(time.Time{}, node, reason)
		parked, err = w.Transition(store.TransitionParams{ID: o.ID, From: []domain.Status{domain.StatusDLNG},
			To: domain.StatusNDLV, History: h, Update: func(m *domain.Message) {
				m.Node, m.Incarnation = "", 0
				m.Error, m.ErrorClass, m.NextAttemptAt = reason, domain.ErrorPermanent, nil
			}})
		if err != nil {
			return err
		}
		return store.RestoreHold(w, parked.Queue, h)
	})
	cancel()
	if err != nil {
		e.log.Error("an outcome that cannot be recorded could not be parked either; the message stays DLNG for recovery",
			"message", o.ID, "err", cause, "park", err)
		if out.Damaged == nil {
			out.Damaged = map[string]error{}
		}
		out.Damaged[o.ID] = fmt.Errorf("message %s: %s; parking it failed: %w", o.ID, reason, err)
		return
	}
	e.log.Error("an outcome that cannot be recorded is parked: the message is NDLV", "message", o.ID, "err", cause)
	if out.parked == nil {
		out.parked = map[int]store.Outcome{}
	}
	out.Applied[at] = parked
	out.parked[at] = store.Outcome{ID: o.ID, Epoch: o.Epoch, Kind: store.OutcomeFailed, Error: reason,
		Class: domain.ErrorPermanent}
}

// outcomeName names an outcome kind for a history entry.
func outcomeName(k store.OutcomeKind) string {
	switch k {
	case store.OutcomeDelivered:
		return "delivered"
	case store.OutcomeRetry:
		return "retry"
	case store.OutcomeFailed:
		return "failed"
	case store.OutcomeHandBack:
		return "handed back"
	}
	return fmt.Sprintf("kind %d", k)
}
