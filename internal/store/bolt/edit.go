package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// versionKey is the key of bucketVersions for version n of a message's
// payload: its id, then n big-endian, so one message's versions are a run
// in version order.
func versionKey(key uuid.UUID, n int) []byte {
	return binary.BigEndian.AppendUint32(bytes.Clone(key[:]), uint32(n))
}

// earlierVersions counts the versions kept of a message's payload besides
// its current one. They are numbered 1 to n without a gap: a key out of
// that run is damage.
func (t *txn) earlierVersions(key uuid.UUID) (int, error) {
	b := t.bucket(bucketVersions)
	if b == nil { // a store opened read-only from before payload edits
		return 0, nil
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(key[:]); k != nil && bytes.HasPrefix(k, key[:]); k, _ = c.Next() {
		n++
		if len(k) != len(key)+4 || binary.BigEndian.Uint32(k[len(key):]) != uint32(n) {
			return 0, corrupt("message %s: its payload versions hold a key %x out of their run 1 to %d", idString(key[:]), k, n)
		}
	}
	return n, nil
}

// PayloadVersions returns how many versions of its payload a message has.
func (t *txn) PayloadVersions(id string) (int, error) {
	_, key, err := t.lookup(id)
	if err != nil {
		return 0, err
	}
	n, err := t.earlierVersions(key)
	return n + 1, err
}

// PayloadVersion returns version n of a message's payload.
func (t *txn) PayloadVersion(id string, n int) ([]byte, error) {
	m, key, err := t.lookup(id)
	if err != nil {
		return nil, err
	}
	earlier, err := t.earlierVersions(key)
	if err != nil {
		return nil, err
	}
	last := earlier + 1
	switch {
	case n < 1 || n > last:
		return nil, noVersion(id, n, last)
	case n == last:
		return t.payload(m, key)
	}
	vk := versionKey(key, n)
	body, ok := unseal(vk, t.bucket(bucketVersions).Get(vk))
	if !ok {
		return nil, corrupt("message %s: its payload version %d does not match its checksum", id, n)
	}
	return bytes.Clone(body), nil
}

// noVersion is the error of a payload version a message does not have.
func noVersion(id string, n, last int) error {
	if last == 1 {
		return domain.NotFoundf("message %s has no payload version %d: it has only version 1, the payload it was sent with", id, n)
	}
	return domain.NotFoundf("message %s has no payload version %d: its versions are 1 to %d", id, n, last)
}

// EditPayload replaces a message's payload by a new version, keeping the
// current one as an earlier version.
func (t *txn) EditPayload(p store.EditPayloadParams) (*domain.Message, error) {
	cur, key, err := t.lookup(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	earlier, err := t.earlierVersions(key)
	if err != nil {
		return nil, err
	}
	version := earlier + 1
	if p.Version != version {
		return nil, fmt.Errorf("message %s: the edit replaces payload version %d, but the current one is %d: %w",
			p.ID, p.Version, version, store.ErrVersionChanged)
	}
	// The current payload, checked against its seal and its size, is kept
	// sealed under its version's key.
	old, err := t.payload(cur, key)
	if err != nil {
		return nil, err
	}
	vk := versionKey(key, version)
	if err := t.bucket(bucketVersions).Put(vk, seal(vk, old)); err != nil {
		return nil, fmt.Errorf("message %s: keep payload version %d: %w", p.ID, version, err)
	}
	if cur.shared {
		// The payload is the parent's, shared with the other messages of
		// a split: this one gets its own, theirs stays.
		if err := t.addPayloadRefs(cur.parent, -1); err != nil {
			return nil, fmt.Errorf("message %s: %w", p.ID, err)
		}
		cur.shared = false
	}
	// The new payload is sealed, as a send's is; the record that follows
	// says so and gives its size.
	cur.legacyPayload = false
	payloads := t.bucket(bucketPayloads)
	if len(p.Payload) == 0 {
		err = payloads.Delete(key[:])
	} else {
		err = payloads.Put(key[:], seal(key[:], append(make([]byte, 0, len(p.Payload)+sumSize), p.Payload...)))
	}
	if err != nil {
		return nil, fmt.Errorf("message %s: store payload: %w", p.ID, err)
	}
	size := int64(len(p.Payload))
	return t.transition(key, cur, cur.Status, func(m *domain.Message) { m.Size = size }, p.History)
}

// deleteVersions removes the earlier versions of a message's payload.
func (t *txn) deleteVersions(key uuid.UUID) error {
	b := t.bucket(bucketVersions)
	if b == nil {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(key[:]); k != nil && bytes.HasPrefix(k, key[:]); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
