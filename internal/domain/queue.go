package domain

import "time"

// QueueState is the summary state of a physical queue shown by `queue list`.
type QueueState string

// The queue states of §5.
const (
	QueueActive  QueueState = "ACTIVE"  // messages to deliver, nothing blocks
	QueueWaiting QueueState = "WAITING" // the head waits for its next attempt
	QueueBlocked QueueState = "BLOCKED" // the head is NDLV and blocks the queue
	// QueueError: nothing to deliver, but NDLV messages that no longer hold
	// the queue up (EO, a permanent error or blacklisting) wait for an operator.
	QueueError   QueueState = "ERROR"
	QueueStopped QueueState = "STOPPED" // stopped by an operator
	// QueueUnconfigured: messages to deliver, or a retry, that no node
	// starts because the queue's receiver is not configured (§8) — in
	// this configuration, or on any live node of a cluster.
	QueueUnconfigured QueueState = "UNCONFIGURED"
	QueueEmpty        QueueState = "EMPTY" // depth 0: nothing left to deliver
)

// QueueStates lists the states in display order.
var QueueStates = []QueueState{QueueActive, QueueWaiting, QueueBlocked, QueueError, QueueStopped, QueueUnconfigured,
	QueueEmpty}

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
			return nil, Invalidf("queue state %q is not one of %s", p, joinStates(QueueStates))
		}
		out = append(out, s)
	}
	return out, nil
}

func joinStates(states []QueueState) string {
	out := ""
	for i, s := range states {
		if i > 0 {
			out += ", "
		}
		out += string(s)
	}
	return out
}

// Queue is one physical queue as `queue list` and `queue show` present it.
type Queue struct {
	Name   string           `json:"name" yaml:"name"`
	QoS    QoS              `json:"qos" yaml:"qos"`
	Stage  Stage            `json:"stage" yaml:"stage"`
	State  QueueState       `json:"state" yaml:"state"`
	Depth  int64            `json:"depth" yaml:"depth"`
	Counts map[Status]int64 `json:"counts" yaml:"counts"`
	// Stuck counts the PEND messages of the queue whose producer the
	// check-back gave up on (§9): they wait for an operator. Like the
	// counts, it is left out at zero.
	Stuck int64      `json:"stuck,omitempty" yaml:"stuck,omitempty"`
	Head  *QueueHead `json:"head" yaml:"head"`
	// BlockedSince is when the head became NDLV, for a BLOCKED queue.
	BlockedSince *time.Time `json:"blocked_since,omitempty" yaml:"blocked_since,omitempty"`
	OldestAt     *time.Time `json:"oldest_at" yaml:"oldest_at"`
	Stopped      bool       `json:"stopped" yaml:"stopped"`
	Owner        string     `json:"owner" yaml:"owner"`
	Receiver     string     `json:"receiver,omitempty" yaml:"receiver,omitempty"`
	// Behind counts the open messages the head holds up: those behind a
	// head that blocks or WAITs, passed-over messages not counted (0 when
	// the head holds nothing up).
	Behind *int64 `json:"behind,omitempty" yaml:"behind,omitempty"`
}

// QueueHead is the first message of a queue that still needs delivery. Its
// error and error class are those of its current status: shown only while
// it WAITs or is NDLV, not the stale text of an error it has left behind
// (a released or resent message keeps its last error in its own record).
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
	h := &QueueHead{ID: m.ID, Status: m.Status, Since: m.UpdatedAt,
		Attempts: m.Attempts, Crashes: m.Crashes, Blacklisted: m.Blacklisted}
	if m.Status == StatusWAIT || m.Status == StatusNDLV {
		h.Error, h.ErrorClass = m.Error, m.ErrorClass
	}
	return h
}

// PassedOver reports whether an open message has left its queue's order
// (§4): on an EO queue a message NDLV by a permanent error or by
// blacklisting stays listed under the queue, but later messages go on
// without it. Such a message is never its queue's head.
func PassedOver(qos QoS, s Status, c ErrorClass) bool {
	return qos == EO && s == StatusNDLV && (c == ErrorPermanent || c == ErrorCrash)
}

// HeadPriority ranks an open message as its queue's head (§4, §5): the
// head is the open message of highest rank, the first in seq order among
// equals. On an EO queue a message whose NDLV blocks the queue ranks above
// one that WAITs for a retry, and both above the rest: with a window,
// messages in flight or not yet started can stand ahead of the one that
// holds the queue up, and that one decides what the queue does. On an EOIO
// queue, whose messages never overtake one another, the first open message
// is the head. A message passed over is never a head (-1).
func HeadPriority(qos QoS, s Status, c ErrorClass) int {
	switch {
	case PassedOver(qos, s, c):
		return -1
	case qos == EOIO:
		return 0
	case Blocks(qos, s, c):
		return 2
	case s == StatusWAIT:
		return 1
	}
	return 0
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

// AwaitingDelivery counts the messages of a queue that wait for its
// receiver: TBDL, WAIT and HOLD — not those in flight, nor those NDLV,
// which wait for an operator.
func AwaitingDelivery(counts map[Status]int64) int64 {
	return counts[StatusTBDL] + counts[StatusWAIT] + counts[StatusHOLD]
}

// StateOf derives a queue's state (§5) from whether it is stopped, its depth
// and its head: the first open message that holds the queue up, nil when
// every open message has been passed over (PassedOver). unconfigured says
// no node delivers to the queue's receiver (§8): a queue that would
// deliver now on its own — ACTIVE — is UNCONFIGURED instead; one that
// needs an operator (BLOCKED, ERROR), waits for a retry (WAITING) or has
// nothing to deliver keeps its state, which says what comes first.
func StateOf(stopped bool, depth int64, head *QueueHead, qos QoS, unconfigured bool) QueueState {
	switch {
	case stopped:
		return QueueStopped
	case depth == 0:
		return QueueEmpty
	case head == nil || PassedOver(qos, head.Status, head.ErrorClass):
		return QueueError
	case Blocks(qos, head.Status, head.ErrorClass):
		return QueueBlocked
	case head.Status == StatusWAIT:
		// A retry the head waits for is what the queue waits for first,
		// whoever delivers it: the state keeps saying so.
		return QueueWaiting
	case unconfigured:
		return QueueUnconfigured
	}
	return QueueActive
}

// HoldsUp reports whether a head in status s with error class c keeps the
// rest of its queue from delivery: it blocks, or it WAITs for a retry
// (§3: no new delivery of the queue starts meanwhile).
func HoldsUp(qos QoS, s Status, c ErrorClass) bool {
	return Blocks(qos, s, c) || s == StatusWAIT
}

// Behind counts the open messages a head holds up: every open message but
// the head and those passed over, when the head holds the queue up; else 0.
func Behind(depth, passedOver int64, head *QueueHead, qos QoS) int64 {
	if head == nil || !HoldsUp(qos, head.Status, head.ErrorClass) {
		return 0
	}
	return max(depth-passedOver-1, 0)
}
