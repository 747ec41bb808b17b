package store

import (
	"errors"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
)

// The rules of the EOIO switch procedure and the error queues (§10), which
// both stores follow, written once over a Reader or Writer. The order they
// keep is a lane's (domain.Lane): its messages in the old set's queue come
// first, then those in its error queue, then those in the current set's.
// Placement (placement.Placer) puts a new message in the error queue while
// that holds messages; LaneWaits holds a message back while messages of its
// lane are ahead of it; Divert moves a failed message, and those of its lane
// after it, to the error queue.

// Placement returns the view of a read-only transaction that placement
// reads: a receiver with no code yet is named with the code it would get.
func Placement(r Reader) placement.Params { return placing{Reader: r} }

// Placing returns the view of a transaction that places messages: a
// receiver with no code yet gets one (AssignCode).
func Placing(w Writer) placement.Params { return placing{Reader: w, w: w} }

type placing struct {
	Reader
	w Writer
}

// Occupied reads the queue's counters, and its head only when they leave
// room for one that holds the queue up.
func (p placing) Occupied(queue string) (holds, heldUp bool, err error) {
	rec, err := p.Queue(queue)
	if errors.Is(err, domain.ErrNotFound) {
		return false, false, nil
	}
	if err != nil || domain.Depth(rec.Counts) == 0 {
		return false, false, err
	}
	if !mayHold(rec) {
		return true, false, nil
	}
	head, err := p.Head(queue)
	return true, head != nil && domain.HoldsUp(rec.QoS, head.Status, head.ErrorClass), err
}

// LaneWaits reports whether an EOIO message at the head of its queue must
// wait, because open messages of its lane are ahead of it: a message of the
// current set waits for those in the old set and in the error queue, a
// message of the error queue for those in the old set. A claim starts no
// such message (§10: a new-set queue does not start an app queue's
// messages while it still has messages in the old set).
func LaneWaits(r Reader, m *domain.Message) (bool, error) {
	if m.QoS != domain.EOIO {
		return false, nil
	}
	sw, err := r.EOIO()
	if err != nil || !sw.Switched() {
		return false, err
	}
	lane := domain.LaneOf(m)
	set, inSet := sw.SetOf(m.Queue)
	inCurrent := inSet && set.Prefix == sw.Current.Prefix
	if !inCurrent && m.Queue != lane.ErrorQueue() {
		return false, nil // the old set comes first
	}
	ahead := lane.Queues(sw.Old)
	if inCurrent {
		ahead = append(ahead, lane.ErrorQueue())
	}
	for _, q := range ahead {
		if holds, err := laneHolds(r, q, lane); holds || err != nil {
			return holds, err
		}
	}
	return false, nil
}

// laneHolds reports whether a queue holds open messages of a lane.
func laneHolds(r Reader, queue string, lane domain.Lane) (bool, error) {
	found := false
	err := r.QueueMessages(queue, QueueMessagesParams{Open: true, AppQueue: lane.AppQueue, Limit: 1}, func(*domain.Message) error {
		found = true
		return ErrStop
	})
	return found, err
}

// Divert keeps the order of a message's lane after it failed (went WAIT
// or NDLV) in queue m.Queue, so that no queue other app queues share waits
// for it (§10): when that queue is shared, m and the later messages of its
// lane there move to the lane's error queue; when it is the lane's queue in
// the old set, the lane's messages in the current set move there after
// them, since they come later. The error queue is then held as §4 says (the
// HOLD rule, RestoreHold). h is the history entry of the moves, its reason
// filled in. It returns the error queue, or "" when nothing moved.
func Divert(w Writer, m *domain.Message, h domain.HistoryEntry) (string, error) {
	if m.QoS != domain.EOIO || (m.Status != domain.StatusWAIT && m.Status != domain.StatusNDLV) {
		return "", nil
	}
	sw, err := w.EOIO()
	if err != nil || !sw.Switched() {
		return "", err
	}
	lane := domain.LaneOf(m)
	set, inSet := sw.SetOf(m.Queue)
	var moving []*domain.Message
	if set.Shared() {
		moving = append(moving, m)
		if err := laneMessages(w, m.Queue, lane, m.Seq, &moving); err != nil {
			return "", err
		}
	}
	if inSet && set.Prefix == sw.Old.Prefix {
		for _, q := range lane.Queues(sw.Current) {
			if err := laneMessages(w, q, lane, 0, &moving); err != nil {
				return "", err
			}
		}
	}
	if len(moving) == 0 {
		return "", nil
	}
	errorQueue := lane.ErrorQueue()
	for _, mv := range moving {
		e := h
		if mv.ID == m.ID {
			e.Reason = fmt.Sprintf("moved to error queue %s: it failed in %s, which app queues share", errorQueue, m.Queue)
		} else {
			e.Reason = fmt.Sprintf("moved to error queue %s after %s, which failed in %s", errorQueue, m.ID, m.Queue)
		}
		_, err := w.Move(MoveParams{ID: mv.ID, From: []domain.Status{mv.Status}, Queue: errorQueue, History: e})
		if err != nil {
			return "", err
		}
	}
	h.Reason = ""
	return errorQueue, RestoreHold(w, errorQueue, h)
}

// laneMessages appends the open messages of a lane in a queue after seq
// to out, but for those in delivery, which stay where they are.
func laneMessages(r Reader, queue string, lane domain.Lane, after uint64, out *[]*domain.Message) error {
	return r.QueueMessages(queue, QueueMessagesParams{Open: true, AppQueue: lane.AppQueue, AfterSeq: after}, func(m *domain.Message) error {
		if m.Status != domain.StatusDLNG && domain.LaneOf(m) == lane {
			*out = append(*out, m)
		}
		return nil
	})
}

// PlaceCommitted puts a PEND EOIO message, before it is committed, in the
// queue a message of its app queue joins now (§9: EOIO order is commit
// order): one prepared before a switch and committed after it then comes
// after the messages sent meanwhile, and one committed while its error
// queue holds messages joins them. It returns the message's queue.
func PlaceCommitted(w Writer, placer placement.Placer, m *domain.Message, h domain.HistoryEntry) (string, error) {
	if m.QoS != domain.EOIO || m.Status != domain.StatusPEND || m.Stage != domain.Inbound {
		return m.Queue, nil
	}
	queue, err := placer.Inbound(Placing(w), m.QoS, m.AppQueue)
	if err != nil || queue == m.Queue {
		return m.Queue, err
	}
	h.Reason = fmt.Sprintf("placed in %s at commit, where its app queue's messages go now (was %s)", queue, m.Queue)
	if _, err := w.Move(MoveParams{ID: m.ID, From: []domain.Status{domain.StatusPEND}, Queue: queue, History: h}); err != nil {
		return "", err
	}
	return queue, nil
}

// ReceiverCode returns the receiver's code; a transaction that places
// assigns one to a receiver that has none (AssignCode), one that only
// reads names the code the receiver would get.
func (p placing) ReceiverCode(receiver string) (string, error) {
	if p.w != nil {
		return AssignCode(p.w, receiver)
	}
	plan, err := PlanCodes(p.Reader, []string{receiver})
	if err != nil {
		return "", err
	}
	return plan[0].Code, nil
}
