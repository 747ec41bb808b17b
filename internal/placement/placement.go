// Package placement names the physical queue a new message goes to (§3),
// using the tuning values of §7 in force at that moment. The admin service
// (inbound messages) and the engine (outbound messages) both use it, so the
// rules live in one place.
package placement

import (
	"github.com/queuectl/queuectl/internal/domain"
)

// The tuning parameters of §7.
const (
	ParamEOInbound  = "EO_INBOUND_PARALLEL"
	ParamEOOutbound = "EO_OUTBOUND_PARALLEL"
)

// Params reads tuning values: a store transaction, or a snapshot of one.
type Params interface {
	// Param returns one tuning value; ok is false when it is not set.
	Param(name, sub string) (value int, ok bool, err error)
}

// Placer names queues; Rand draws a slot in [0, n).
type Placer struct {
	Role domain.Role
	Rand func(n int) int
}

// Inbound names the inbound queue of a message sent by a producer.
func (p Placer) Inbound(params Params, qos domain.QoS, appQueue string) (string, error) {
	if qos == domain.EOIO {
		return domain.EOIOInboundQueue(domain.PrefixXBQ, p.Role, appQueue), nil
	}
	n, err := parallel(params, ParamEOInbound, p.Role.Subparameter())
	if err != nil {
		return "", err
	}
	return domain.EOInboundQueue(p.Role, p.Rand(n)), nil
}

// Outbound names the outbound queue of a message for one receiver.
func (p Placer) Outbound(params Params, qos domain.QoS, receiver, appQueue string) (string, error) {
	if qos == domain.EOIO {
		return domain.EOIOOutboundQueue(domain.PrefixXBQ, receiver, appQueue), nil
	}
	n, err := parallel(params, ParamEOOutbound, receiver, "")
	if err != nil {
		return "", err
	}
	return domain.EOOutboundQueue(receiver, n, p.Rand(n)), nil
}

// parallel reads a parallelism value: that of the first subparameter set
// (a receiver's own, then the default for all receivers), else 1.
func parallel(params Params, name string, subs ...string) (int, error) {
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
