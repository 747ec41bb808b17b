package domain

import (
	"fmt"
	"hash/crc32"
	"strings"
)

// Role is the node's role in the inbound stage (§3); its letter goes into inbound queue names.
type Role string

// The roles of engine.role.
const (
	RoleSender   Role = "sender"
	RoleCentral  Role = "central"
	RoleReceiver Role = "receiver"
)

// ParseRole accepts sender, central or receiver.
func ParseRole(s string) (Role, error) {
	switch r := Role(strings.ToLower(strings.TrimSpace(s))); r {
	case RoleSender, RoleCentral, RoleReceiver:
		return r, nil
	}
	return "", Invalidf("engine.role %q must be sender, central or receiver", s)
}

// Letter is the role letter of §3: S, I or R.
func (r Role) Letter() string {
	switch r {
	case RoleSender:
		return "S"
	case RoleReceiver:
		return "R"
	}
	return "I"
}

// Subparameter is the EO_INBOUND_PARALLEL subparameter that applies to the role (§7).
func (r Role) Subparameter() string {
	switch r {
	case RoleSender:
		return "SENDER"
	case RoleReceiver:
		return "RECEIVER"
	}
	return "CENTRAL"
}

// Prefix is the EOIO queue prefix; a switch (§10) flips it between XBQ and XB2.
type Prefix string

// The two EOIO prefixes of §3 and §10.
const (
	PrefixXBQ Prefix = "XBQ"
	PrefixXB2 Prefix = "XB2"
)

// MaxQueueName is the longest physical queue name (§3).
const MaxQueueName = 24

// Code4 is the four-hex-digit code of a receiver name used in outbound queue names.
func Code4(receiver string) string {
	return fmt.Sprintf("%04X", crc32.ChecksumIEEE([]byte(receiver))>>16)
}

// EOInboundQueue names an EO inbound queue: XBT + role letter + a 4-digit number.
// slot must be in [0, n) for n = EO_INBOUND_PARALLEL; the caller draws it.
func EOInboundQueue(role Role, slot int) string {
	return fmt.Sprintf("XBT%s%04d", role.Letter(), slot)
}

// EOOutboundQueue names an EO outbound queue: XBTO + code4(receiver), plus a
// 4-digit slot when EO_OUTBOUND_PARALLEL is above 1 (parallel > 1).
func EOOutboundQueue(receiver string, parallel, slot int) string {
	name := "XBTO" + Code4(receiver)
	if parallel > 1 {
		name += fmt.Sprintf("%04d", slot)
	}
	return name
}

// EOIOInboundQueue names an EOIO inbound queue: prefix + role letter + app queue.
func EOIOInboundQueue(prefix Prefix, role Role, appQueue string) string {
	return string(prefix) + role.Letter() + appQueue
}

// EOIOOutboundQueue names an EOIO outbound queue: prefix + O + code4(receiver) + app queue.
func EOIOOutboundQueue(prefix Prefix, receiver, appQueue string) string {
	return string(prefix) + "O" + Code4(receiver) + appQueue
}

// QueueQoS tells the qos and stage of a physical queue from its name alone.
// The fourth letter is a role letter (inbound) or O (outbound); EOIO names may
// also be the error queues of §10: E (inbound) and F (outbound).
func QueueQoS(name string) (QoS, Stage, bool) {
	if len(name) < 4 {
		return "", "", false
	}
	letter := name[3]
	switch name[:3] {
	case "XBT":
		switch letter {
		case 'S', 'I', 'R':
			return EO, Inbound, true
		case 'O':
			return EO, Outbound, true
		}
	case string(PrefixXBQ), string(PrefixXB2):
		switch letter {
		case 'S', 'I', 'R', 'E':
			return EOIO, Inbound, true
		case 'O', 'F':
			return EOIO, Outbound, true
		}
	}
	return "", "", false
}
