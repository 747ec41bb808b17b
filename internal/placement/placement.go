// Package placement decides where a new message goes: its physical queue
// (§3, using the tuning values of §7 in force at that moment) and whether it
// arrives TBDL or HOLD behind a blocked EOIO head (§4). The admin service
// (inbound messages) and the engine (outbound messages) both use it, so the
// rules live in one place.
package placement

import (
	"errors"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The tuning parameters of §7.
const (
	ParamEOInbound  = "EO_INBOUND_PARALLEL"
	ParamEOOutbound = "EO_OUTBOUND_PARALLEL"
)

// Placer names queues; Rand draws a slot in [0, n).
type Placer struct {
	Role domain.Role
	Rand func(n int) int
}

// Inbound names the inbound queue of a message sent by a producer.
func (p Placer) Inbound(r store.Reader, qos domain.QoS, appQueue string) (string, error) {
	if qos == domain.EOIO {
		return domain.EOIOInboundQueue(domain.PrefixXBQ, p.Role, appQueue), nil
	}
	n, err := parallel(r, ParamEOInbound, p.Role.Subparameter())
	if err != nil {
		return "", err
	}
	return domain.EOInboundQueue(p.Role, p.Rand(n)), nil
}

// Outbound names the outbound queue of a message for one receiver.
func (p Placer) Outbound(r store.Reader, qos domain.QoS, receiver, appQueue string) (string, error) {
	if qos == domain.EOIO {
		return domain.EOIOOutboundQueue(domain.PrefixXBQ, receiver, appQueue), nil
	}
	n, err := parallel(r, ParamEOOutbound, receiver, "")
	if err != nil {
		return "", err
	}
	return domain.EOOutboundQueue(receiver, n, p.Rand(n)), nil
}

// parallel reads a parallelism value: that of the first subparameter set
// (a receiver's own, then the default for all receivers), else 1.
func parallel(r store.Reader, name string, subs ...string) (int, error) {
	for _, sub := range subs {
		v, ok, err := r.Param(name, sub)
		if err != nil {
			return 0, err
		}
		if ok && v >= 1 {
			return v, nil
		}
	}
	return 1, nil
}

// ArrivalStatus is the status a message that becomes visible to delivery now
// takes in queue: HOLD in an EOIO queue that is blocked (its head WAITs or is
// NDLV, or messages already wait in HOLD), TBDL otherwise. A queue that does
// not exist yet is not blocked.
func ArrivalStatus(r store.Reader, queue string, qos domain.QoS) (domain.Status, error) {
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
	head, err := r.Head(queue)
	if err != nil {
		return "", err
	}
	if head != nil && domain.HoldsSuccessors(qos, head.Status) {
		return domain.StatusHOLD, nil
	}
	return domain.StatusTBDL, nil
}
