package bolt

import (
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
)

// ReceiverCode returns the code the store assigned a receiver (§3).
func (t *txn) ReceiverCode(receiver string) (string, error) {
	v := t.bucket(bucketCodes).Get([]byte(receiver))
	if v == nil {
		return "", domain.NotFoundf("receiver %s has no code yet", receiver)
	}
	if !domain.ValidCode(string(v)) {
		return "", fmt.Errorf("receiver %s: stored code %q is not four hex digits", receiver, v)
	}
	return string(v), nil
}

// ReceiverCodes calls fn for each receiver with a code, by name.
func (t *txn) ReceiverCodes(fn func(receiver, code string) error) error {
	return stopped(t.walk(t.bucket(bucketCodes), nil, nil, false, func(k, v []byte) error {
		return fn(string(k), string(v))
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
	if err := codes.Put([]byte(receiver), []byte(code)); err != nil {
		return false, fmt.Errorf("receiver %s: store its code: %w", receiver, err)
	}
	if err := owners.Put([]byte(code), []byte(receiver)); err != nil {
		return false, fmt.Errorf("receiver %s: store its code: %w", receiver, err)
	}
	return true, nil
}

// adoptCodes gives the receivers of a store from before receiver codes the
// codes their outbound queues carry, so that those keep their names: in
// queue name order, the first receiver of a code keeps it (two receivers
// whose queues were shared: the other one gets a code of its own at its
// next message).
func adoptCodes(tx *bbolt.Tx) error {
	t := &txn{tx: tx}
	return t.walk(t.bucket(bucketQueues), nil, nil, false, func(k, v []byte) error {
		q, err := decodeQueue(string(k), v)
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
