// Package domain holds queuectl's message model: messages, queues, statuses and
// their transitions, queue naming and input validation. It has no I/O.
package domain

import (
	"fmt"
	"slices"
	"strings"
)

// Status is a message's processing status (SPEC §4).
type Status string

// The statuses of §4.
const (
	StatusPEND Status = "PEND" // prepared by a transactional send, not yet visible to delivery
	StatusTBDL Status = "TBDL" // to be delivered
	StatusDLNG Status = "DLNG" // being delivered by a node
	StatusDLVD Status = "DLVD" // delivered (final)
	StatusWAIT Status = "WAIT" // transient error, next attempt at next_attempt_at
	StatusHOLD Status = "HOLD" // EOIO: waiting behind a blocked head
	StatusNDLV Status = "NDLV" // not delivered; needs an operator
	StatusFAIL Status = "FAIL" // cancelled by an operator (final)
)

// Statuses lists every status in lifecycle order; lists and counters use this order.
var Statuses = []Status{StatusPEND, StatusTBDL, StatusDLNG, StatusWAIT, StatusHOLD, StatusNDLV, StatusDLVD, StatusFAIL}

// Final reports whether no transition leaves s.
func (s Status) Final() bool { return s == StatusDLVD || s == StatusFAIL }

// Valid reports whether s is one of the statuses of §4.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// ParseStatuses parses a comma-separated status list such as "TBDL,wait".
// Case is folded because statuses are codes, not names.
func ParseStatuses(list string) ([]Status, error) {
	var out []Status
	for _, part := range splitList(list) {
		s := Status(strings.ToUpper(part))
		if !s.Valid() {
			return nil, Invalidf("status %q is not one of %s", part, joinStatuses(Statuses))
		}
		out = append(out, s)
	}
	return out, nil
}

// Alternatives names statuses as a choice, for messages: "NDLV", "NDLV or
// WAIT", "NDLV, WAIT or HOLD"; "none" for none.
func Alternatives(ss []Status) string {
	switch len(ss) {
	case 0:
		return "none"
	case 1:
		return string(ss[0])
	}
	return joinStatuses(ss[:len(ss)-1]) + " or " + string(ss[len(ss)-1])
}

// ExpectStatus is the compare-and-set of §4 on a message's status: nil when
// cur is one of from, else a conflict naming both.
func ExpectStatus(id string, cur Status, from []Status) error {
	if slices.Contains(from, cur) {
		return nil
	}
	return Conflictf("message %s: status is %s, expected %s", id, cur, Alternatives(from))
}

func joinStatuses(ss []Status) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, ", ")
}

func splitList(list string) []string {
	var out []string
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// QoS is a message's quality of service.
type QoS string

// The qualities of service of §1.
const (
	EO   QoS = "EO"   // exactly once, unordered
	EOIO QoS = "EOIO" // exactly once in order, per application queue
)

// ParseQoS accepts EO or EOIO in any case.
func ParseQoS(s string) (QoS, error) {
	switch q := QoS(strings.ToUpper(strings.TrimSpace(s))); q {
	case EO, EOIO:
		return q, nil
	}
	return "", Invalidf("qos %q must be EO or EOIO", s)
}

// Stage is the processing stage of a message (§3).
type Stage string

// The two stages of §3.
const (
	Inbound  Stage = "inbound"
	Outbound Stage = "outbound"
)

// ParseStage accepts inbound or outbound in any case.
func ParseStage(s string) (Stage, error) {
	switch st := Stage(strings.ToLower(strings.TrimSpace(s))); st {
	case Inbound, Outbound:
		return st, nil
	}
	return "", Invalidf("stage %q must be inbound or outbound", s)
}

// ErrorClass classifies a message's last error (§2, §4).
type ErrorClass string

// The error classes of §2.
const (
	ErrorTransient ErrorClass = "transient"
	ErrorPermanent ErrorClass = "permanent"
	ErrorCrash     ErrorClass = "crash"
	ErrorAdmin     ErrorClass = "admin"
)

// Actor says who makes a transition: the engine or an operator.
type Actor int

// The two kinds of actor of §4.
const (
	ByEngine Actor = iota + 1
	ByOperator
)

func (a Actor) String() string {
	switch a {
	case ByEngine:
		return "engine"
	case ByOperator:
		return "operator"
	}
	return fmt.Sprintf("actor(%d)", int(a))
}
