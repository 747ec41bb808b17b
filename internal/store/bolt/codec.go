package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Messages, history entries and queue records are stored in a compact binary
// form of their own, so that a transition writes a few dozen bytes instead
// of a JSON document, and the file format does not change when the API's
// JSON does. Times are kept to the microsecond, as every store keeps them.
// Strings and integers are length-prefixed and varint-coded; statuses and
// error classes are one byte each. Audit entries, written rarely, stay JSON.

// recordV1 is the first byte of a binary record of layout version 2: its
// encoding, unsealed. Records are now written sealed (recordSealed, seal.go),
// in the same form after the marker.
const recordV1 = 1

// The flags byte of a stored message.
const (
	msgEOIO          = 1 << iota // qos EOIO (else EO)
	msgOutbound                  // stage outbound (else inbound)
	msgBlacklisted               // blacklisted
	msgNextAttempt               // next_attempt_at is set
	msgParent                    // parent_id is set
	msgSharedPayload             // the payload is the parent's (routed outbound messages)
	msgChecked                   // the check-back's fields follow the headers (§9)
	msgTail                      // a tail follows, last: its flags (tail*), then its fields
)

// The flags byte of a stored message's tail: fields that most messages do
// not have, added after the record's form was fixed.
const (
	tailKey           = 1 << iota // the idempotency key (§2)
	tailInbound                   // the inbound queue a routed message passed through (§3)
	tailLegacyPayload             // its payload was stored unsealed, before sealing (seal.go)
	tailHistory                   // its history follows the record (else it is in the history bucket)
)

// The flags byte of a stored message's check-back fields.
const (
	checkStuck = 1 << iota // stuck
	checkAt                // last_check_at is set
)

// The flags byte of a stored queue.
const (
	queueEOIO     = 1 << iota // qos EOIO
	queueOutbound             // stage outbound
	queueStopped              // stopped by an operator
)

// errorClasses lists the error classes in their stored order.
var errorClasses = []domain.ErrorClass{"", domain.ErrorTransient, domain.ErrorPermanent, domain.ErrorCrash, domain.ErrorAdmin}

// noStatus stands for the missing From of a first history entry.
const noStatus = 0xff

// storedStatuses gives each status the byte it is stored as: in records,
// in the status index's keys and in the order of a queue record's counts.
// It is the file format — never reorder it; a new status goes at the end.
var storedStatuses = [...]domain.Status{
	domain.StatusPEND, domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT,
	domain.StatusHOLD, domain.StatusNDLV, domain.StatusDLVD, domain.StatusFAIL,
}

func statusCode(s domain.Status) (byte, error) {
	if s == "" {
		return noStatus, nil
	}
	if i := slices.Index(storedStatuses[:], s); i >= 0 {
		return byte(i), nil
	}
	return 0, fmt.Errorf("status %q is not a status", s)
}

func statusOf(c byte) (domain.Status, error) {
	if c == noStatus {
		return "", nil
	}
	if int(c) < len(storedStatuses) {
		return storedStatuses[c], nil
	}
	return "", fmt.Errorf("status code %d is unknown", c)
}

// encoder appends values to a record.
type encoder struct{ b []byte }

func (e *encoder) byte(v byte)      { e.b = append(e.b, v) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) time(t time.Time) { e.varint(t.UnixMicro()) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) raw(v []byte)     { e.b = append(e.b, v...) }
func (e *encoder) strs(ss []string) {
	e.uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}
func (e *encoder) status(s domain.Status) error {
	c, err := statusCode(s)
	e.byte(c)
	return err
}

// decoder reads a record; the first error sticks, and the values read after
// it are zero. Strings are copied out of the record, so that they outlive
// the transaction whose mapped memory it is.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("record is truncated")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) time() time.Time { return time.UnixMicro(d.varint()).UTC() }

func (d *decoder) raw(n int) []byte {
	if d.err != nil || n < 0 || len(d.b) < n {
		d.fail(errShort)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.raw(int(d.uvarint()))) }

func (d *decoder) strs() []string {
	n := d.uvarint()
	if n == 0 || n > uint64(len(d.b)) {
		if n > 0 {
			d.fail(errShort)
		}
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) status() domain.Status {
	s, err := statusOf(d.byte())
	if err != nil {
		d.fail(err)
	}
	return s
}

// encodeMessage encodes m without its id (the key) and payload, with the
// encoded entries of its history after the record, sealed under key: one
// value, so that a status change rewrites one value on one page. f says
// where its payload is (f.shared: its parent's) and in which form.
func encodeMessage(key uuid.UUID, m *domain.Message, f form) ([]byte, error) {
	e := encoder{b: make([]byte, 0, 96+len(m.Error)+len(m.Interface)+len(f.history)+sumSize)}
	e.byte(recordSealed)
	var flags byte
	if m.QoS == domain.EOIO {
		flags |= msgEOIO
	}
	if m.Stage == domain.Outbound {
		flags |= msgOutbound
	}
	if m.Blacklisted {
		flags |= msgBlacklisted
	}
	if m.NextAttemptAt != nil {
		flags |= msgNextAttempt
	}
	var parent uuid.UUID
	if m.ParentID != "" {
		var err error
		if parent, err = parseID(m.ParentID); err != nil {
			return nil, fmt.Errorf("parent id: %w", err)
		}
		flags |= msgParent
	}
	if f.shared {
		flags |= msgSharedPayload
	}
	checked := m.Checks > 0 || m.LastCheckAt != nil || m.LastAnswer != "" || m.Stuck
	if checked {
		flags |= msgChecked
	}
	var tail byte
	if m.Key != "" {
		tail |= tailKey
	}
	if m.InboundQueue != "" {
		tail |= tailInbound
	}
	if f.legacyPayload {
		tail |= tailLegacyPayload
	}
	if f.history != nil {
		tail |= tailHistory
	}
	if tail != 0 {
		flags |= msgTail
	}
	e.byte(flags)
	if err := e.status(m.Status); err != nil {
		return nil, err
	}
	class := slices.Index(errorClasses, m.ErrorClass)
	if class < 0 {
		return nil, fmt.Errorf("error class %q is not one of transient, permanent, crash, admin", m.ErrorClass)
	}
	e.byte(byte(class))
	e.uvarint(m.Seq)
	e.uvarint(uint64(m.Attempts))
	e.uvarint(uint64(m.Crashes))
	e.uvarint(uint64(m.Size))
	e.uvarint(m.Incarnation)
	e.time(m.CreatedAt)
	e.time(m.UpdatedAt)
	if m.NextAttemptAt != nil {
		e.time(*m.NextAttemptAt)
	}
	if m.ParentID != "" {
		e.raw(parent[:])
	}
	e.str(m.Sender)
	e.str(m.Receiver)
	e.str(m.Interface)
	e.str(m.AppQueue)
	e.str(m.Queue)
	e.str(m.Error)
	e.str(m.Node)
	e.strs(m.Receivers)
	e.uvarint(uint64(len(m.Headers)))
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		e.str(k)
		e.str(m.Headers[k])
	}
	if checked {
		// Last, so that the records written before the check-back existed
		// decode as they are; most messages are never checked and carry
		// none of it.
		encodeCheck(&e, m)
	}
	if tail != 0 {
		// Last, as the check-back's fields before it.
		e.byte(tail)
		if m.Key != "" {
			e.str(m.Key)
		}
		if m.InboundQueue != "" {
			e.str(m.InboundQueue)
		}
	}
	e.raw(f.history)
	return seal(key[:], e.b), nil
}

// encodeCheck appends the check-back's fields of m.
func encodeCheck(e *encoder, m *domain.Message) {
	var flags byte
	if m.Stuck {
		flags |= checkStuck
	}
	if m.LastCheckAt != nil {
		flags |= checkAt
	}
	e.byte(flags)
	e.uvarint(uint64(m.Checks))
	if m.LastCheckAt != nil {
		e.time(*m.LastCheckAt)
	}
	e.str(m.LastAnswer)
}

// decodeCheck reads what encodeCheck wrote into m.
func decodeCheck(d *decoder, m *domain.Message) {
	flags := d.byte()
	m.Stuck = flags&checkStuck != 0
	m.Checks = int(d.uvarint())
	if flags&checkAt != 0 {
		t := d.time()
		m.LastCheckAt = &t
	}
	m.LastAnswer = d.str()
}

// form is how a message's record keeps what lies beside it.
type form struct {
	// shared marks a routed outbound message whose payload is its
	// parent's.
	shared bool
	// legacyPayload marks a payload stored unsealed, by a store of layout
	// version 2.
	legacyPayload bool
	// history holds the encoded entries of the message's history, which
	// follow its record; nil when they are in the history bucket (a
	// record of layout version 2 not rewritten since). Read from a
	// transaction's pages, it is valid only during the transaction.
	history []byte
}

// storedMessage is a decoded message with what the store keeps beside it.
type storedMessage struct {
	*domain.Message
	form
	parent uuid.UUID // the parent's id, as a key
}

// payloadKey is the key of the message's payload: its own id, or its
// parent's for a routed outbound message.
func (s storedMessage) payloadKey(id uuid.UUID) uuid.UUID {
	if s.shared {
		return s.parent
	}
	return id
}

// decodeMessage decodes the message stored under key k into new memory,
// checking its seal; legacy accepts an unsealed record of layout version 2.
func decodeMessage(k, v []byte, legacy bool) (storedMessage, error) {
	if len(k) != 16 {
		return storedMessage{}, corrupt("the messages bucket holds a key of %d bytes, %x, not a message id", len(k), k)
	}
	d := decoder{b: v}
	id := idString(k)
	old := false
	switch {
	case len(v) > 0 && v[0] == recordSealed:
		body, ok := unseal(k, v)
		if !ok {
			return storedMessage{}, corrupt("message %s: its record does not match its checksum", id)
		}
		d.b = body[1:]
	case len(v) > 0 && v[0] == recordV1 && legacy:
		d.b, old = v[1:], true
	case len(v) == 0:
		return storedMessage{}, corrupt("message %s: its record is empty", id)
	default:
		return storedMessage{}, corrupt("message %s: its record starts with %#x, which this store does not write", id, v[0])
	}
	m := &domain.Message{ID: id}
	flags := d.byte()
	m.QoS, m.Stage = domain.EO, domain.Inbound
	if flags&msgEOIO != 0 {
		m.QoS = domain.EOIO
	}
	if flags&msgOutbound != 0 {
		m.Stage = domain.Outbound
	}
	m.Blacklisted = flags&msgBlacklisted != 0
	m.Status = d.status()
	if c := int(d.byte()); c < len(errorClasses) {
		m.ErrorClass = errorClasses[c]
	} else {
		d.fail(fmt.Errorf("error class code %d is unknown", c))
	}
	m.Seq = d.uvarint()
	m.Attempts = int(d.uvarint())
	m.Crashes = int(d.uvarint())
	m.Size = int64(d.uvarint())
	m.Incarnation = d.uvarint()
	m.CreatedAt = d.time()
	m.UpdatedAt = d.time()
	if flags&msgNextAttempt != 0 {
		t := d.time()
		m.NextAttemptAt = &t
	}
	var parent uuid.UUID
	if flags&msgParent != 0 {
		if p := d.raw(16); p != nil {
			m.ParentID, parent = idString(p), uuid.UUID(p)
		}
	} else if flags&msgSharedPayload != 0 {
		d.fail(errors.New("its payload is its parent's, but it names no parent"))
	}
	m.Sender = d.str()
	m.Receiver = d.str()
	m.Interface = d.str()
	m.AppQueue = d.str()
	m.Queue = d.str()
	m.Error = d.str()
	m.Node = d.str()
	m.Receivers = d.strs()
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
		m.Headers = make(map[string]string, n)
		for range n {
			k := d.str()
			m.Headers[k] = d.str()
		}
	} else if n > 0 {
		d.fail(errShort)
	}
	if flags&msgChecked != 0 {
		decodeCheck(&d, m)
	}
	f := form{shared: flags&msgSharedPayload != 0, legacyPayload: old}
	if flags&msgTail != 0 {
		tail := d.byte()
		if tail&tailKey != 0 {
			m.Key = d.str()
		}
		if tail&tailInbound != 0 {
			m.InboundQueue = d.str()
		}
		f.legacyPayload = f.legacyPayload || tail&tailLegacyPayload != 0
		if tail&tailHistory != 0 {
			f.history = d.b
			if len(f.history) == 0 && d.err == nil {
				d.fail(errors.New("its history is empty"))
			}
			d.b = nil
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("%d bytes follow the record", len(d.b)))
	}
	if d.err != nil {
		return storedMessage{}, corrupt("message %s: decode its record: %v", m.ID, d.err)
	}
	return storedMessage{Message: m, form: f, parent: parent}, nil
}

// appendHistoryEntry appends one encoded history entry to a message's history.
func appendHistoryEntry(b []byte, h domain.HistoryEntry) ([]byte, error) {
	e := encoder{b: b}
	e.time(h.At)
	if err := e.status(h.From); err != nil {
		return nil, err
	}
	if err := e.status(h.To); err != nil {
		return nil, err
	}
	e.str(h.Node)
	e.str(h.Actor)
	e.str(h.Reason)
	return e.b, nil
}

// historyEntries returns the encoded entries of the history stored under
// key (a message's id) in the history bucket, where layout version 2 kept
// histories, unsealed; a record of version 3 holds its history, sealed
// with it. A record that keeps no history of its own has one there: a
// missing one is damage.
func historyEntries(key, v []byte, legacy bool) ([]byte, error) {
	switch {
	case v == nil:
		return nil, corrupt("message %s: its history is missing", idString(key))
	case legacy && len(v) > 0 && v[0] >= 0x80:
		return v, nil
	}
	return nil, corrupt("message %s: its history is not in a form this store writes", idString(key))
}

// decodeHistory decodes a message's whole history, oldest first, from its
// encoded entries (historyEntries).
func decodeHistory(v []byte) ([]domain.HistoryEntry, error) {
	d := decoder{b: v}
	var out []domain.HistoryEntry
	for len(d.b) > 0 && d.err == nil {
		h := domain.HistoryEntry{At: d.time(), From: d.status(), To: d.status()}
		h.Node, h.Actor, h.Reason = d.str(), d.str(), d.str()
		out = append(out, h)
	}
	if d.err != nil {
		return nil, corrupt("decode history: %v", d.err)
	}
	return out, nil
}

// encodeQueue encodes a queue record without its name (the key) and epoch
// (the store's), sealed under its name.
func encodeQueue(q *store.QueueRecord) []byte {
	e := encoder{b: make([]byte, 0, 32+len(q.Receiver)+sumSize)}
	e.byte(recordSealed)
	var flags byte
	if q.QoS == domain.EOIO {
		flags |= queueEOIO
	}
	if q.Stage == domain.Outbound {
		flags |= queueOutbound
	}
	if q.Stopped {
		flags |= queueStopped
	}
	e.byte(flags)
	e.str(q.Receiver)
	e.uvarint(q.LastSeq)
	e.time(q.CreatedAt)
	e.uvarint(uint64(q.PassedOver))
	for _, s := range storedStatuses {
		e.uvarint(uint64(q.Counts[s]))
	}
	// Added after the counts, so that older records decode with none.
	e.uvarint(uint64(q.Stuck))
	return seal([]byte(q.Name), e.b)
}

// decodeQueue decodes the record of queue name, checking its seal; legacy
// accepts an unsealed record of layout version 2.
func decodeQueue(name string, v []byte, legacy bool) (*store.QueueRecord, error) {
	d := decoder{b: v}
	switch {
	case len(v) > 0 && v[0] == recordSealed:
		body, ok := unseal([]byte(name), v)
		if !ok {
			return nil, corrupt("queue %q: its record does not match its checksum", name)
		}
		d.b = body[1:]
	case len(v) > 0 && v[0] == recordV1 && legacy:
		d.b = v[1:]
	default:
		return nil, corrupt("queue %q: its record is not in a form this store writes", name)
	}
	q := &store.QueueRecord{Name: name, QoS: domain.EO, Stage: domain.Inbound, Counts: map[domain.Status]int64{}}
	flags := d.byte()
	if flags&queueEOIO != 0 {
		q.QoS = domain.EOIO
	}
	if flags&queueOutbound != 0 {
		q.Stage = domain.Outbound
	}
	q.Stopped = flags&queueStopped != 0
	q.Receiver = d.str()
	q.LastSeq = d.uvarint()
	q.CreatedAt = d.time()
	q.PassedOver = int64(d.uvarint())
	for _, s := range storedStatuses {
		if n := int64(d.uvarint()); n > 0 {
			q.Counts[s] = n
		}
	}
	if len(d.b) > 0 {
		q.Stuck = int64(d.uvarint())
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("%d bytes follow the record", len(d.b)))
	}
	if d.err != nil {
		return nil, corrupt("decode queue %q: %v", name, d.err)
	}
	return q, nil
}
