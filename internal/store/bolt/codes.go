package bolt

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
)

// A receiver's code is sealed under the receiver's name, and the code's
// owner under the code (seal.go): a flipped bit would otherwise give a
// receiver another one's queues.

// codeOf returns the code stored for receiver, "" when it has none.
func (t *txn) codeOf(receiver string, v []byte) (string, error) {
	if v == nil {
		return "", nil
	}
	body, ok := sealedFixed([]byte(receiver), v, 4, t.legacy)
	if !ok || !domain.ValidCode(string(body)) {
		return "", corrupt("receiver %s: its stored code fails its check", receiver)
	}
	return string(body), nil
}

// ReceiverCode returns the code the store assigned a receiver (§3).
func (t *txn) ReceiverCode(receiver string) (string, error) {
	code, err := t.codeOf(receiver, t.bucket(bucketCodes).Get([]byte(receiver)))
	if err != nil {
		return "", err
	}
	if code == "" {
		return "", domain.NotFoundf("receiver %s has no code yet", receiver)
	}
	return code, nil
}

// ReceiverCodes calls fn for each receiver with a code, by name.
func (t *txn) ReceiverCodes(fn func(receiver, code string) error) error {
	return stopped(t.walk(t.bucket(bucketCodes), nil, nil, false, func(k, v []byte) error {
		code, err := t.codeOf(string(k), v)
		if err != nil {
			return err
		}
		return fn(string(k), code)
	}))
}

// PutReceiverCode gives receiver the code unless one of them has been
// given already.
func (t *txn) PutReceiverCode(receiver, code string) (bool, error) {
	if err := validName("receiver", receiver); err != nil {
		return false, err
	}
	if !domain.ValidCode(code) {
		return false, domain.Invalidf("receiver code %q is not four uppercase hex digits", code)
	}
	codes, owners := t.bucket(bucketCodes), t.bucket(bucketCodeOwners)
	if codes.Get([]byte(receiver)) != nil || owners.Get([]byte(code)) != nil {
		return false, nil
	}
	if err := codes.Put([]byte(receiver), seal([]byte(receiver), []byte(code))); err != nil {
		return false, fmt.Errorf("receiver %s: store its code: %w", receiver, err)
	}
	if err := owners.Put([]byte(code), seal([]byte(code), []byte(receiver))); err != nil {
		return false, fmt.Errorf("receiver %s: store its code: %w", receiver, err)
	}
	return true, nil
}

// adoptCodes gives the receivers of a store from before receiver codes the
// codes their outbound queues carry, so that those keep their names: in
// queue name order, the first receiver of a code keeps it (two receivers
// whose queues were shared: the other one gets a code of its own at its
// next message). legacy: the store may hold unsealed values.
func adoptCodes(tx *bbolt.Tx, legacy bool) error {
	t := &txn{tx: tx, legacy: legacy}
	return t.walk(t.bucket(bucketQueues), nil, nil, false, func(k, v []byte) error {
		q, err := decodeQueue(string(k), v, legacy)
		if err != nil {
			return err
		}
		code := domain.QueueCode(q.Name)
		if q.Stage != domain.Outbound || q.Receiver == "" || code == "" {
			return nil
		}
		if _, err := t.PutReceiverCode(q.Receiver, code); err != nil {
			return fmt.Errorf("adopt the code of queue %s: %w", q.Name, err)
		}
		return nil
	})
}
