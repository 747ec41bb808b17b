package store

import (
	"errors"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
)

// Receiver codes (§3): every receiver has outbound queues of its own. The
// four hex digits its queue names carry are assigned once, by the store, at
// the receiver's first message: domain.Code4 of its name first, the next
// free code (domain.NextCode) when another receiver has that one. Every
// node and command reads the code from the store, so the nodes of a cluster
// name a receiver's queues alike, whatever order they met the receivers in.

// AssignCode returns the code of receiver, giving it one when it has none.
func AssignCode(w Writer, receiver string) (string, error) {
	code, err := w.ReceiverCode(receiver)
	if err == nil || !errors.Is(err, domain.ErrNotFound) {
		return code, err
	}
	code = domain.Code4(receiver)
	for range domain.Codes {
		ok, err := w.PutReceiverCode(receiver, code)
		if err != nil || ok {
			return code, err
		}
		// Taken — by another receiver, or by this one in a transaction
		// that committed meanwhile.
		if mine, err := w.ReceiverCode(receiver); err == nil || !errors.Is(err, domain.ErrNotFound) {
			return mine, err
		}
		code = domain.NextCode(code)
	}
	return "", fmt.Errorf("receiver %s: all %d receiver codes are taken", receiver, domain.Codes)
}

// PlanCodes tells, for each of receivers, the code it has in the store or
// the one it would get if they came in the order given (domain.PlanCodes).
func PlanCodes(r Reader, receivers []string) ([]domain.CodePlan, error) {
	assigned := map[string]string{}
	if err := r.ReceiverCodes(func(receiver, code string) error {
		assigned[receiver] = code
		return nil
	}); err != nil {
		return nil, err
	}
	return domain.PlanCodes(assigned, receivers), nil
}
