package domain

import "time"

// QueueState is the summary state of a physical queue shown by `queue list`.
type QueueState string

// The queue states of §5.
const (
	QueueActive  QueueState = "ACTIVE"  // messages to deliver, nothing blocks
	QueueWaiting QueueState = "WAITING" // the head waits for its next attempt
	QueueBlocked QueueState = "BLOCKED" // the head is NDLV and blocks the queue
	QueueStopped QueueState = "STOPPED" // stopped by an operator
	QueueEmpty   QueueState = "EMPTY"   // nothing left to deliver
)

// QueueStates lists the states in display order.
var QueueStates = []QueueState{QueueActive, QueueWaiting, QueueBlocked, QueueStopped, QueueEmpty}

// ParseQueueStates parses a comma-separated list of queue states.
func ParseQueueStates(list string) ([]QueueState, error) {
	var out []QueueState
	for _, p := range splitList(list) {
		s := QueueState(upper(p))
		ok := false
		for _, v := range QueueStates {
			ok = ok || v == s
		}
		if !ok {
			return nil, Invalidf("queue state %q is not one of ACTIVE, WAITING, BLOCKED, STOPPED, EMPTY", p)
		}
		out = append(out, s)
	}
	return out, nil
}

// Queue is one physical queue as `queue list` and `queue show` present it.
type Queue struct {
	Name   string           `json:"name" yaml:"name"`
	QoS    QoS              `json:"qos" yaml:"qos"`
	Stage  Stage            `json:"stage" yaml:"stage"`
	State  QueueState       `json:"state" yaml:"state"`
	Depth  int64            `json:"depth" yaml:"depth"`
	Counts map[Status]int64 `json:"counts" yaml:"counts"`
	Head   *QueueHead       `json:"head" yaml:"head"`
	// BlockedSince is when the head became NDLV, for a BLOCKED queue.
	BlockedSince *time.Time `json:"blocked_since,omitempty" yaml:"blocked_since,omitempty"`
	OldestAt     *time.Time `json:"oldest_at" yaml:"oldest_at"`
	Stopped      bool       `json:"stopped" yaml:"stopped"`
	Owner        string     `json:"owner" yaml:"owner"`
	Receiver     string     `json:"receiver,omitempty" yaml:"receiver,omitempty"`
	// Behind counts the open messages after the head; `queue blocked` shows it.
	Behind *int64 `json:"behind,omitempty" yaml:"behind,omitempty"`
}

// QueueHead is the first message of a queue that still needs delivery.
type QueueHead struct {
	ID          string     `json:"id" yaml:"id"`
	Status      Status     `json:"status" yaml:"status"`
	Error       string     `json:"error" yaml:"error"`
	ErrorClass  ErrorClass `json:"error_class,omitempty" yaml:"error_class,omitempty"`
	Since       time.Time  `json:"since" yaml:"since"`
	Attempts    int        `json:"attempts" yaml:"attempts"`
	Crashes     int        `json:"crashes" yaml:"crashes"`
	Blacklisted bool       `json:"blacklisted" yaml:"blacklisted"`
}

// HeadOf summarises a message as its queue's head.
func HeadOf(m *Message) *QueueHead {
	return &QueueHead{ID: m.ID, Status: m.Status, Error: m.Error, ErrorClass: m.ErrorClass, Since: m.UpdatedAt,
		Attempts: m.Attempts, Crashes: m.Crashes, Blacklisted: m.Blacklisted}
}

// PassedOver reports whether an open message has left its queue's order
// (§4): on an EO queue a message NDLV by a permanent error or by
// blacklisting stays listed under the queue, but later messages go on
// without it. Such a message is never its queue's head.
func PassedOver(qos QoS, s Status, c ErrorClass) bool {
	return qos == EO && s == StatusNDLV && (c == ErrorPermanent || c == ErrorCrash)
}

// Blocks reports whether a head message in status s with error class c stops
// the rest of its queue (§4): an NDLV head blocks, unless it is passed over.
func Blocks(qos QoS, s Status, c ErrorClass) bool {
	return s == StatusNDLV && !PassedOver(qos, s, c)
}

// HoldsSuccessors reports whether the messages behind a head in status s wait
// in HOLD (§4): on an EOIO queue whose head WAITs for a retry or is NDLV.
func HoldsSuccessors(qos QoS, s Status) bool {
	return qos == EOIO && (s == StatusWAIT || s == StatusNDLV)
}

// Depth counts the messages of a queue that still need delivery or an operator:
// everything but PEND (not yet visible) and the final statuses.
func Depth(counts map[Status]int64) int64 {
	var n int64
	for s, c := range counts {
		if s != StatusPEND && !s.Final() {
			n += c
		}
	}
	return n
}

// StateOf derives a queue's state from whether it is stopped, its depth and its head.
func StateOf(stopped bool, depth int64, head *QueueHead, qos QoS, headClass ErrorClass) QueueState {
	switch {
	case stopped:
		return QueueStopped
	case depth == 0 || head == nil:
		return QueueEmpty
	case Blocks(qos, head.Status, headClass):
		return QueueBlocked
	case head.Status == StatusWAIT:
		return QueueWaiting
	}
	return QueueActive
}
