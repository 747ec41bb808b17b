package domain

import "slices"

// SendRequest is what a producer asks to send: one inbound message (§2, §5 send).
type SendRequest struct {
	QoS       QoS               `json:"qos"`
	Sender    string            `json:"sender"`
	Receivers []string          `json:"receivers,omitempty"`
	AppQueue  string            `json:"app_queue,omitempty"`
	Interface string            `json:"interface,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Payload   []byte            `json:"-"`
	// Key is the producer's idempotency key (§2): a send that repeats it
	// stores nothing new.
	Key string `json:"key,omitempty"`
	// Prepare stores the message as PEND for a transactional send (§9).
	Prepare bool `json:"prepare,omitempty"`
}

// Validate checks every rule of §2 and returns the first broken one.
func (r *SendRequest) Validate(maxPayload int64) error {
	switch r.QoS {
	case EO, EOIO:
	case "":
		return Invalidf("qos is required (EO or EOIO)")
	default:
		return Invalidf("qos %q must be EO or EOIO", r.QoS)
	}
	if err := ValidateParty("sender", r.Sender); err != nil {
		return err
	}
	for _, rc := range r.Receivers {
		if err := ValidateParty("receiver", rc); err != nil {
			return err
		}
	}
	if dup := duplicate(r.Receivers); dup != "" {
		return Invalidf("receiver %q is named twice", dup)
	}
	if r.QoS == EOIO {
		if err := ValidateAppQueue(r.AppQueue); err != nil {
			return err
		}
	} else if r.AppQueue != "" {
		return Invalidf("app queue %q given for an EO message; app queues are for EOIO only", r.AppQueue)
	}
	if err := ValidateInterface(r.Interface); err != nil {
		return err
	}
	if err := ValidateHeaders(r.Headers); err != nil {
		return err
	}
	if err := ValidateKey(r.Key); err != nil {
		return err
	}
	return ValidatePayload(int64(len(r.Payload)), maxPayload)
}

func duplicate(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return s[i]
		}
	}
	return ""
}
