package engine

import (
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

var arrivalStatus = placement.ArrivalStatus

// holdSuccessors moves the TBDL messages of an EOIO queue to HOLD: its head
// WAITs or is NDLV, and they must not overtake it (§4).
func holdSuccessors(w store.Writer, queue string, h domain.HistoryEntry) error {
	return moveOpen(w, queue, domain.StatusTBDL, domain.StatusHOLD, h)
}

// releaseHeld moves the HOLD messages of a queue back to TBDL, in seq order,
// once the head that blocked them is delivered, failed or resent.
func releaseHeld(w store.Writer, queue string, h domain.HistoryEntry) error {
	rec, err := w.Queue(queue)
	if err != nil || rec.Counts[domain.StatusHOLD] == 0 {
		return err
	}
	return moveOpen(w, queue, domain.StatusHOLD, domain.StatusTBDL, h)
}

// moveOpen changes every open message of the queue in status from to status to.
func moveOpen(w store.Writer, queue string, from, to domain.Status, h domain.HistoryEntry) error {
	var ids []string
	err := w.QueueMessages(queue, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
		if m.Status == from {
			ids = append(ids, m.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, History: h}); err != nil {
			return err
		}
	}
	return nil
}
