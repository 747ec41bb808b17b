package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// hotRecord is one run of recordSQL over a batch of outcomes.
type hotRecord struct {
	node store.Node
	// ids are the messages of the outcomes sent, at is where each outcome
	// sent is in the batch: a message named twice, an id that names no
	// message, or an outcome of a kind the statement does not know is left
	// to the general path, which refuses it.
	ids []pgtype.UUID
	at  []int
	// applied holds, per outcome of the batch, the message as stored
	// after it, where the statement applied it.
	applied []*domain.Message
	// damaged holds, per place in the batch, why the message an outcome
	// applied to could not be read back: the outcome is recorded, and the
	// others are not held up by it.
	damaged map[int]error
	state   int
	// ready says an outcome made its message ready again (a hand-back).
	ready bool
}

// outcomeStatus is the status an outcome of kind k leaves its message in.
var outcomeStatus = map[store.OutcomeKind]domain.Status{
	store.OutcomeDelivered: domain.StatusDLVD,
	store.OutcomeRetry:     domain.StatusWAIT,
	store.OutcomeFailed:    domain.StatusNDLV,
	store.OutcomeHandBack:  domain.StatusTBDL,
}

// outcomeReason is the reason of an outcome's history entry: its own, or
// what its kind says.
func outcomeReason(o store.Outcome) string {
	switch {
	case o.Reason != "":
		return o.Reason
	case o.Kind == store.OutcomeDelivered:
		return "delivered"
	case o.Kind == store.OutcomeHandBack:
		return "handed back at shutdown"
	}
	return string(o.Class) + " error: " + o.Error
}

// queueHotRecord queues on b the statement of the outcomes of node n.
func queueHotRecord(b *pgx.Batch, n store.Node, outcomes []store.Outcome) *hotRecord {
	h := &hotRecord{node: n, applied: make([]*domain.Message, len(outcomes))}
	var epochs, retries []int64
	var statuses, errs, classes, reasons []string
	seen := map[[16]byte]bool{}
	for i, o := range outcomes {
		id, ok := parseID(o.ID)
		to, known := outcomeStatus[o.Kind]
		if !ok || !known || seen[id.Bytes] {
			continue
		}
		seen[id.Bytes] = true
		h.ids, h.at = append(h.ids, id), append(h.at, i)
		epochs, retries = append(epochs, int64(o.Epoch)), append(retries, o.RetryIn.Microseconds())
		statuses, errs, classes = append(statuses, string(to)), append(errs, clean(o.Error)), append(classes, string(o.Class))
		reasons = append(reasons, clean(outcomeReason(o)))
	}
	if h.ids == nil {
		h.ids = []pgtype.UUID{}
	}
	b.Queue(recordSQL, int64(n.Incarnation), clean(n.ID), h.ids, epochs, statuses, errs, classes, retries, reasons).Query(h.scan)
	return h
}

// scan reads the statement's rows: the node's state on each, and an
// outcome applied on each but when none applied.
func (h *hotRecord) scan(rows pgx.Rows) error {
	defer rows.Close()
	var sc rowScanner
	for rows.Next() {
		var ord pgtype.Int8
		var ms messageScan
		dest := []any{&h.state, &ord}
		if rows.RawValues()[1] == nil {
			dest = append(dest, make([]any, messageColumnCount)...)
		} else {
			dest = append(dest, ms.dest()...)
		}
		if err := sc.scan(rows, dest...); err != nil {
			// A row that does not decode: which outcome it is, from the
			// columns before the message's.
			if !ord.Valid {
				return fmt.Errorf("record outcomes: %w", err)
			}
			if h.damaged == nil {
				h.damaged = map[int]error{}
			}
			h.damaged[h.at[ord.Int64-1]] = err
			continue
		}
		if !ord.Valid {
			continue
		}
		m := ms.message().Message
		h.applied[h.at[ord.Int64-1]] = m
		h.ready = h.ready || m.Status == domain.StatusTBDL
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("record outcomes: %w", err)
	}
	return nil
}

// done reports, once the statement ran, a node that may not record.
func (h *hotRecord) done() error {
	return fenceError(h.node, h.state)
}

// left lists where the outcomes the statement did not apply are in the
// batch.
func (h *hotRecord) left() []int {
	var out []int
	for i, m := range h.applied {
		if _, bad := h.damaged[i]; m == nil && !bad {
			out = append(out, i)
		}
	}
	return out
}

// notify wakes the nodes of the store's schema, in a statement of its own.
func (s *Store) notify(ctx context.Context) {
	_, _ = s.hot.Exec(ctx, notifySQL)
}
