// Package placement decides where messages go: the physical queue a new
// message joins (§3), using the tuning values of §7 in force at that moment,
// and receiver determination, the routing of an inbound message to its
// outbound messages (§3, §8). The admin service (inbound messages) and the
// stores' claims (outbound messages) both use it, so the rules live in one
// place.
package placement

import (
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// The tuning parameters of §7.
const (
	ParamEOInbound  = "EO_INBOUND_PARALLEL"
	ParamEOOutbound = "EO_OUTBOUND_PARALLEL"
)

// Params reads what placement depends on within a store transaction: the
// tuning values, the EOIO switch state, and whether a queue holds messages.
type Params interface {
	// Param returns one tuning value; ok is false when it is not set.
	Param(name, sub string) (value int, ok bool, err error)
	// EOIO returns the state of the EOIO switch procedure (§10).
	EOIO() (domain.EOIOSwitch, error)
	// Occupied reports whether a queue holds open messages, and whether
	// its head holds it up (WAIT or NDLV): false, false for a queue that
	// does not exist.
	Occupied(queue string) (holds, heldUp bool, err error)
	// ReceiverCode returns the code of a receiver's outbound queues, the
	// one the store assigned it (§3) — assigning it now, in a transaction
	// that writes, to a receiver that has none yet.
	ReceiverCode(receiver string) (string, error)
}

// Placer names queues; Rand draws a slot in [0, n).
type Placer struct {
	Role domain.Role
	Rand func(n int) int
}

// Inbound names the inbound queue of a message sent by a producer.
func (p Placer) Inbound(params Params, qos domain.QoS, appQueue string) (string, error) {
	if qos == domain.EOIO {
		return eoio(params, domain.Lane{Stage: domain.Inbound, AppQueue: appQueue}, func(s domain.EOIOSet) string {
			return s.Inbound(p.Role, appQueue)
		})
	}
	n, err := parallel(params, ParamEOInbound, p.Role.Subparameter())
	if err != nil {
		return "", err
	}
	return domain.EOInboundQueue(p.Role, p.Rand(n)), nil
}

// Outbound names the outbound queue of a message for one receiver.
func (p Placer) Outbound(params Params, qos domain.QoS, receiver, appQueue string) (string, error) {
	code, err := params.ReceiverCode(receiver)
	if err != nil {
		return "", err
	}
	if qos == domain.EOIO {
		return eoio(params, domain.Lane{Stage: domain.Outbound, Receiver: receiver, Code: code, AppQueue: appQueue}, func(s domain.EOIOSet) string {
			return s.Outbound(code, appQueue)
		})
	}
	n, err := parallel(params, ParamEOOutbound, receiver, "")
	if err != nil {
		return "", err
	}
	return domain.EOOutboundQueue(code, n, p.Rand(n)), nil
}

// eoio names the queue a new EOIO message of a lane joins (§10): its queue
// in the current set — named by in — unless the lane has to keep its order
// in its error queue: while the error queue holds messages, and, during a
// switch to a shared set, while the lane's old queue is held up by its
// head (so that no message waits behind it in a queue other app queues
// share). The current queue is read first: in a store that locks what it
// reads, that orders the placement after a move of the lane's messages
// out of it.
func eoio(params Params, lane domain.Lane, in func(domain.EOIOSet) string) (string, error) {
	sw, err := params.EOIO()
	if err != nil || !sw.Switched() {
		// Never switched: one queue per app queue, and no error queue.
		return in(sw.Current), err
	}
	queue := in(sw.Current)
	if _, _, err := params.Occupied(queue); err != nil {
		return "", err
	}
	errorQueue := lane.ErrorQueue()
	switch holds, _, err := params.Occupied(errorQueue); {
	case err != nil:
		return "", err
	case holds:
		return errorQueue, nil
	case !sw.Current.Shared():
		return queue, nil
	}
	_, heldUp, err := params.Occupied(in(sw.Old))
	if heldUp {
		return errorQueue, err
	}
	return queue, err
}

// parallel reads a parallelism value: that of the first subparameter set
// (a receiver's own, then the default for all receivers), else 1.
func parallel(params ParamReader, name string, subs ...string) (int, error) {
	for _, sub := range subs {
		v, ok, err := params.Param(name, sub)
		if err != nil {
			return 0, err
		}
		if ok && v >= 1 {
			return v, nil
		}
	}
	return 1, nil
}

// Rule is a routing rule of §8: messages of Sender, and of Interface unless
// it is empty, go to Receivers.
type Rule struct {
	Sender    string
	Interface string
	Receivers []string
}

// Target is one outbound message that receiver determination creates.
type Target struct {
	Receiver string
	Queue    string
}

// Router does receiver determination (§3): the receivers named at send
// time, else those of the routing rules, each placed in its outbound queue.
// The stores run it inside the transaction that routes, so that the
// outbound messages and the inbound message's DLVD commit together.
type Router struct {
	Placer
	Rules []Rule
}

// Route returns the outbound messages to create for inbound message m, with
// the history reason that says how they were found. A message with no
// receiver is an error: it cannot be delivered (NDLV, permanent).
func (r Router) Route(params Params, m *domain.Message) ([]Target, string, error) {
	receivers, how := m.Receivers, "named at send time"
	if len(receivers) == 0 {
		receivers, how = r.receiversFor(m), "by routing rules"
	}
	if len(receivers) == 0 {
		return nil, "", fmt.Errorf("no receiver: no route matches sender %s interface %q, and none was named at send time",
			m.Sender, m.Interface)
	}
	out := make([]Target, 0, len(receivers))
	for _, rc := range receivers {
		q, err := r.Outbound(params, m.QoS, rc, m.AppQueue)
		if err != nil {
			return nil, "", err
		}
		out = append(out, Target{Receiver: rc, Queue: q})
	}
	return out, fmt.Sprintf("receiver determination (%s): %s", how, strings.Join(receivers, ", ")), nil
}

// receiversFor applies the rules: every rule whose sender matches and whose
// interface is empty or matches adds its receivers, once each.
func (r Router) receiversFor(m *domain.Message) []string {
	var out []string
	seen := map[string]bool{}
	for _, rule := range r.Rules {
		if rule.Sender != m.Sender || (rule.Interface != "" && rule.Interface != m.Interface) {
			continue
		}
		for _, rc := range rule.Receivers {
			if !seen[rc] {
				seen[rc] = true
				out = append(out, rc)
			}
		}
	}
	return out
}

// ParamReader reads the tuning values in force.
type ParamReader interface {
	Param(name, sub string) (value int, ok bool, err error)
}

// Creates reports whether the tuning values in force would place a new
// message in the queue named (of receiver, for an outbound queue): an EO
// queue whose slot lies within its parameter's value, or, for an EO
// outbound queue, whose form (with a slot or without) the value asks for.
// An EOIO queue is its app queue's, which any new message may name: the
// parameters create every one of them. Retention removes the empty queues
// the parameters would not create again (store.DeleteUncreatedQueues).
func Creates(params ParamReader, name, receiver string) (bool, error) {
	qos, stage, ok := domain.QueueQoS(name)
	if !ok || qos != domain.EO {
		return true, nil
	}
	slot := func(digits string) int {
		if len(digits) != 4 {
			return -1
		}
		n := 0
		for _, c := range digits {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	if stage == domain.Inbound {
		role := map[byte]domain.Role{'S': domain.RoleSender, 'I': domain.RoleCentral, 'R': domain.RoleReceiver}[name[3]]
		n, err := parallel(params, ParamEOInbound, role.Subparameter())
		if err != nil {
			return false, err
		}
		s := slot(name[4:])
		return s >= 0 && s < n, nil
	}
	if len(name) < 8 {
		return false, nil
	}
	n, err := parallel(params, ParamEOOutbound, receiver, "")
	if err != nil {
		return false, err
	}
	if n == 1 {
		return len(name) == 8, nil
	}
	s := slot(name[8:])
	return s >= 0 && s < n, nil
}
