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

// Code4 is a receiver's first choice of code, the four hex digits of its
// outbound queue names: the top 16 bits of the CRC-32 of its name. Two
// receivers may share it (RCV0 and RCV1450 both give F8A4), so the code a
// receiver's queues carry is the one the store assigned it (§3): Code4
// first, the next free code (NextCode) on a clash.
func Code4(receiver string) string {
	return fmt.Sprintf("%04X", crc32.ChecksumIEEE([]byte(receiver))>>16)
}

// Codes is how many receiver codes there are: four hex digits.
const Codes = 1 << 16

// NextCode is the code tried after code when code is taken: one more,
// FFFF wrapping to 0000.
func NextCode(code string) string {
	var n uint32
	if _, err := fmt.Sscanf(code, "%04X", &n); err != nil {
		return Code4(code)
	}
	return fmt.Sprintf("%04X", (n+1)%Codes)
}

// ValidCode reports whether s has the form of a receiver code: four
// uppercase hex digits.
func ValidCode(s string) bool { return len(s) == 4 && isHex(s) }

// CodePlan is the code a receiver has, or would get at its first message.
type CodePlan struct {
	Receiver string `json:"receiver" yaml:"receiver"`
	// Code is the receiver's code; Assigned says the store gave it
	// already (else it is the one the receiver would get now).
	Code     string `json:"code" yaml:"code"`
	Assigned bool   `json:"assigned" yaml:"assigned"`
	// Clash names the receiver that holds this one's first choice, Code4
	// of its name, when that is not its code: "" for none.
	Clash string `json:"clash,omitempty" yaml:"clash,omitempty"`
	// Undecided says that Clash has no code yet either: which of the two
	// gets Code4 is up to which gets a message first.
	Undecided bool `json:"undecided,omitempty" yaml:"undecided,omitempty"`
}

// PlanCodes tells, for each of receivers, the code it has (assigned maps
// receivers to the codes the store gave them) or the one it would get if
// they came in the order given: Code4 first, the next free code on a
// clash. A clash shows in Clash.
func PlanCodes(assigned map[string]string, receivers []string) []CodePlan {
	owner := map[string]string{} // code → receiver
	codes := map[string]string{} // receiver → code
	for rc, code := range assigned {
		owner[code], codes[rc] = rc, code
	}
	out := make([]CodePlan, 0, len(receivers))
	for _, rc := range receivers {
		p := CodePlan{Receiver: rc, Code: codes[rc], Assigned: codes[rc] != ""}
		if !p.Assigned {
			p.Code = Code4(rc)
			for n := 0; owner[p.Code] != "" && n < Codes; n++ {
				p.Code = NextCode(p.Code)
			}
			owner[p.Code], codes[rc] = rc, p.Code
		}
		if first := Code4(rc); p.Code != first {
			p.Clash = owner[first]
			_, decided := assigned[p.Clash]
			p.Undecided = !p.Assigned && !decided
		}
		out = append(out, p)
	}
	return out
}

// QueueCode returns the receiver code an outbound queue's name carries
// (its characters 5 to 8, in every outbound form: XBTO, XBQO, XB2O, XBQF),
// and "" for an inbound queue or a name of no queue.
func QueueCode(queue string) string {
	if _, stage, ok := QueueQoS(queue); !ok || stage != Outbound || len(queue) < 8 || !ValidCode(queue[4:8]) {
		return ""
	}
	return queue[4:8]
}

// EOInboundQueue names an EO inbound queue: XBT + role letter + a 4-digit number.
// slot must be in [0, n) for n = EO_INBOUND_PARALLEL; the caller draws it.
func EOInboundQueue(role Role, slot int) string {
	return fmt.Sprintf("XBT%s%04d", role.Letter(), slot)
}

// EOOutboundQueue names an EO outbound queue: XBTO + the receiver's code,
// plus a 4-digit slot when EO_OUTBOUND_PARALLEL is above 1 (parallel > 1).
func EOOutboundQueue(code string, parallel, slot int) string {
	name := "XBTO" + code
	if parallel > 1 {
		name += fmt.Sprintf("%04d", slot)
	}
	return name
}

// EOIOInboundQueue names an EOIO inbound queue: prefix + role letter + app queue.
func EOIOInboundQueue(prefix Prefix, role Role, appQueue string) string {
	return string(prefix) + role.Letter() + appQueue
}

// EOIOOutboundQueue names an EOIO outbound queue: prefix + O + the
// receiver's code + app queue.
func EOIOOutboundQueue(prefix Prefix, code, appQueue string) string {
	return string(prefix) + "O" + code + appQueue
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
