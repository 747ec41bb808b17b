package domain

import (
	"fmt"
	"hash/crc32"
	"strings"
	"time"
)

// EOIO over-serialization and the switch procedure (§10). EOIO messages go
// to a set of queues whose names start with the set's prefix: by default
// (and after a switch with 0 queues) one queue per app queue, after a switch
// with N queues the app queues hashed into N queues per stage. A switch
// makes a new set with the other prefix; the old set drains, and keeps its
// place in each app queue's order (Lane).

// MaxEOIOQueues is the most queues per stage a switch may ask for (§10):
// two digits of a queue name.
const MaxEOIOQueues = 99

// The error queues of §10 start with these; XBQG is reserved.
const (
	errorInbound  = "XBQE"
	errorOutbound = "XBQF"
	// ReservedQueuePrefix is reserved by §10; no queue is named with it.
	ReservedQueuePrefix = "XBQG"
)

// Other returns the prefix a switch from p goes to: XBQ ↔ XB2.
func (p Prefix) Other() Prefix {
	if p == PrefixXB2 {
		return PrefixXBQ
	}
	return PrefixXB2
}

// EOIOSet is one set of EOIO queues: its prefix, and how many queues per
// stage app queues are hashed into — 0 keeps one queue per app queue.
type EOIOSet struct {
	Prefix Prefix `json:"prefix" yaml:"prefix"`
	Queues int    `json:"queues" yaml:"queues"`
}

// Shared reports whether app queues share the set's queues.
func (s EOIOSet) Shared() bool { return s.Queues > 0 }

// String describes the set for an operator.
func (s EOIOSet) String() string {
	if !s.Shared() {
		return string(s.Prefix) + ", one queue per app queue"
	}
	return fmt.Sprintf("%s, %d queues per stage", s.Prefix, s.Queues)
}

// EOIOSlot is the queue of a shared set that an app queue is hashed into:
// the CRC-32 (IEEE) of its name modulo n, as code4 hashes receivers. It is
// stable: the same app queue always lands in the same queue of a set of n.
func EOIOSlot(appQueue string, n int) int {
	return int(crc32.ChecksumIEEE([]byte(appQueue)) % uint32(n))
}

// Inbound names the inbound queue of appQueue in the set for a node role:
// prefix + role letter + app queue, or + EOIO + two digits when shared.
func (s EOIOSet) Inbound(role Role, appQueue string) string {
	if !s.Shared() {
		return EOIOInboundQueue(s.Prefix, role, appQueue)
	}
	return fmt.Sprintf("%s%sEOIO%02d", s.Prefix, role.Letter(), EOIOSlot(appQueue, s.Queues))
}

// Outbound names the outbound queue of appQueue for the receiver of a code
// in the set: prefix + O + code + app queue, or + EOIO + two digits when
// shared.
func (s EOIOSet) Outbound(code, appQueue string) string {
	if !s.Shared() {
		return EOIOOutboundQueue(s.Prefix, code, appQueue)
	}
	return fmt.Sprintf("%sO%sEOIO%02d", s.Prefix, code, EOIOSlot(appQueue, s.Queues))
}

// EOIOSwitch is the state of the switch procedure, kept in the store.
type EOIOSwitch struct {
	// Current is the set new EOIO messages go to.
	Current EOIOSet `json:"current" yaml:"current"`
	// Old is the set in force before the last switch: its queues drain
	// and get no new messages. Its prefix is empty before the first switch.
	Old EOIOSet `json:"old" yaml:"old"`
	// At and By say when and by whom the last switch was made.
	At time.Time `json:"at" yaml:"at"`
	By string    `json:"by" yaml:"by"`
}

// DefaultEOIO is the state of a store never switched: one queue per app
// queue, named with XBQ (§3).
var DefaultEOIO = EOIOSwitch{Current: EOIOSet{Prefix: PrefixXBQ}}

// Switched reports whether a switch was ever made, so that an old set may
// still hold messages.
func (s EOIOSwitch) Switched() bool { return s.Old.Prefix != "" }

// SetOf returns the set a queue belongs to by its prefix — the current or
// the old one — and false for an error queue or a queue of neither.
func (s EOIOSwitch) SetOf(queue string) (EOIOSet, bool) {
	if qos, _, ok := QueueQoS(queue); !ok || qos != EOIO || ErrorQueue(queue) {
		return EOIOSet{}, false
	}
	switch Prefix(queue[:3]) {
	case s.Current.Prefix:
		return s.Current, true
	case s.Old.Prefix:
		return s.Old, s.Switched()
	}
	return EOIOSet{}, false
}

// SharedQueue reports whether app queues share a queue: it is a queue of a
// shared set. An error in such a queue moves the failing message and its
// app queue's later messages to the error queue (§10).
func (s EOIOSwitch) SharedQueue(queue string) bool {
	set, ok := s.SetOf(queue)
	return ok && set.Shared()
}

// ErrorQueue reports whether a queue is an EOIO error queue of §10.
func ErrorQueue(name string) bool {
	return strings.HasPrefix(name, errorInbound) || strings.HasPrefix(name, errorOutbound)
}

// SharedQueueName reports whether a name has the form of a queue of a
// shared set: XBQ or XB2, a role letter or O + code4, EOIO, two digits.
// (An app queue named like EOIO07 gives a per-app-queue queue the same form;
// only the switch state tells the two apart — EOIOSwitch.SharedQueue.)
func SharedQueueName(name string) bool {
	if qos, stage, ok := QueueQoS(name); !ok || qos != EOIO || ErrorQueue(name) {
		return false
	} else if stage == Outbound {
		return len(name) == 14 && isHex(name[4:8]) && name[8:12] == "EOIO" && isDigits(name[12:])
	}
	return len(name) == 10 && name[4:8] == "EOIO" && isDigits(name[8:])
}

func isHex(s string) bool {
	return strings.Trim(s, "0123456789ABCDEF") == ""
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Lane is what EOIO keeps in order (§1): the messages of one app queue at
// one stage — outbound, for one receiver. Around a switch and an error a
// lane's messages may be in three places, which it delivers in this order:
// its queue in the old set (sent before the switch), its error queue (the
// failed message and those after it), its queue in the current set.
type Lane struct {
	Stage    Stage
	Receiver string // outbound lanes
	Code     string // outbound lanes: the receiver's code (§3)
	AppQueue string
}

// LaneOf returns the lane of an EOIO message. An outbound message's queue
// name carries its receiver's code.
func LaneOf(m *Message) Lane {
	l := Lane{Stage: m.Stage, AppQueue: m.AppQueue}
	if m.Stage == Outbound {
		l.Receiver, l.Code = m.Receiver, QueueCode(m.Queue)
	}
	return l
}

// ErrorQueue names the lane's error queue (§10): XBQE + app queue inbound,
// XBQF + the receiver's code + app queue outbound.
func (l Lane) ErrorQueue() string {
	if l.Stage == Outbound {
		return errorOutbound + l.Code + l.AppQueue
	}
	return errorInbound + l.AppQueue
}

// Queues names the lane's queues in a set: outbound one; inbound one per
// node role, since the inbound name holds the role letter (the nodes of a
// store normally share one role, so all but one of them stay empty).
func (l Lane) Queues(s EOIOSet) []string {
	if l.Stage == Outbound {
		return []string{s.Outbound(l.Code, l.AppQueue)}
	}
	return []string{s.Inbound(RoleSender, l.AppQueue), s.Inbound(RoleCentral, l.AppQueue), s.Inbound(RoleReceiver, l.AppQueue)}
}
