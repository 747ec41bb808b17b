package store

import (
	"errors"

	"github.com/queuectl/queuectl/internal/domain"
)

// RestoreHold restores the HOLD rule of §4 in one queue after a change to it:
// in an EOIO queue whose head WAITs or is NDLV, every TBDL message behind it
// is held (TBDL→HOLD); once the head is anything else — delivered, failed,
// resent, released — the held messages go on (HOLD→TBDL) in seq order. EO
// queues have no HOLD. The engine's outcomes and every operator action end
// with it, in the same transaction, so the rule lives in one place. h is the
// history entry the moved messages get; an empty reason is filled in to say
// which way they moved and why.
func RestoreHold(w Writer, queue string, h domain.HistoryEntry) error {
	rec, err := w.Queue(queue)
	if err != nil || rec.QoS != domain.EOIO {
		return err
	}
	if HoldSettled(rec) {
		return nil
	}
	held, waiting := rec.Counts[domain.StatusHOLD], rec.Counts[domain.StatusTBDL]
	head, err := w.Head(queue)
	if err != nil {
		return err
	}
	blocked := head != nil && domain.HoldsSuccessors(rec.QoS, head.Status)
	switch {
	case blocked && waiting > 0:
		if h.Reason == "" {
			h.Reason = "held behind " + head.ID + " (" + string(head.Status) + ")"
		}
		return moveOpen(w, queue, domain.StatusTBDL, domain.StatusHOLD, h)
	case !blocked && held > 0:
		if h.Reason == "" {
			h.Reason = "the queue's head no longer blocks it"
		}
		return moveOpen(w, queue, domain.StatusHOLD, domain.StatusTBDL, h)
	}
	return nil
}

// HoldSettled says whether RestoreHold has nothing to do in a queue whatever
// its head: it is EO, or nothing in it is held and no message in it could
// hold others.
func HoldSettled(rec *QueueRecord) bool {
	if rec.QoS != domain.EOIO {
		return true
	}
	held, waiting := rec.Counts[domain.StatusHOLD], rec.Counts[domain.StatusTBDL]
	return held == 0 && (waiting == 0 || !mayHold(rec))
}

// moveOpen changes every open message of the queue in status from to status to.
func moveOpen(w Writer, queue string, from, to domain.Status, h domain.HistoryEntry) error {
	var ids []string
	err := w.QueueMessages(queue, QueueMessagesParams{Open: true}, func(m *domain.Message) error {
		if m.Status == from {
			ids = append(ids, m.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := w.Transition(TransitionParams{ID: id, From: []domain.Status{from}, To: to, History: h}); err != nil {
			return err
		}
	}
	return nil
}

// ArrivalStatus is the status a message that becomes visible to delivery now
// takes in queue: HOLD in an EOIO queue that is blocked (its head WAITs or is
// NDLV, or messages already wait in HOLD), TBDL otherwise. A queue that does
// not exist yet is not blocked.
func ArrivalStatus(r Reader, queue string, qos domain.QoS) (domain.Status, error) {
	if qos != domain.EOIO {
		return domain.StatusTBDL, nil
	}
	rec, err := r.Queue(queue)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.StatusTBDL, nil
	}
	if err != nil {
		return "", err
	}
	if rec.Counts[domain.StatusHOLD] > 0 {
		return domain.StatusHOLD, nil
	}
	if !mayHold(rec) {
		return domain.StatusTBDL, nil
	}
	head, err := r.Head(queue)
	if err != nil {
		return "", err
	}
	if head != nil && domain.HoldsSuccessors(qos, head.Status) {
		return domain.StatusHOLD, nil
	}
	return domain.StatusTBDL, nil
}

// mayHold reports whether the queue's counts leave room for a head that
// holds its successors: only a WAIT or NDLV message can. It spares the
// common case — a delivery, an arrival in a flowing queue — the read of
// the head.
func mayHold(rec *QueueRecord) bool {
	return rec.Counts[domain.StatusWAIT] > 0 || rec.Counts[domain.StatusNDLV] > 0
}
