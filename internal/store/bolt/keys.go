package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
)

// Bucket names; see the package comment for what each holds.
const (
	bucketMeta        = "meta"
	bucketMessages    = "messages"
	bucketPayloads    = "payloads"
	bucketPayloadRefs = "payload_refs"
	bucketHistory     = "history"
	bucketQueueAll    = "queue_all"
	bucketQueueOpen   = "queue_open"
	bucketAppOpen     = "app_open"
	bucketReady       = "ready"
	bucketDue         = "due"
	bucketChecks      = "checks"
	bucketStatus      = "status"
	bucketQueues      = "queues"
	bucketParams      = "params"
	bucketAudit       = "audit"
	// bucketKeys maps a sender and an idempotency key (keyOf) to the id
	// of the message sent with them (§2).
	bucketKeys = "keys"
	// bucketCodes maps a receiver to its code (§3), bucketCodeOwners a
	// code to its receiver.
	bucketCodes      = "receiver_codes"
	bucketCodeOwners = "code_owners"
	// bucketVersions keeps the earlier versions of the payloads operators
	// edited (versionKey); the current one stays in bucketPayloads.
	bucketVersions = "payload_versions"
	// bucketCrashes keeps the crashes recoveries counted (store.CountedCrash):
	// be64(dead incarnation) id -> uvarint(crash) varint(recovery's µs).
	bucketCrashes = "crashes"
)

// bucketNames lists every bucket a store has; Open creates them.
func bucketNames() []string {
	return []string{
		bucketMeta, bucketMessages, bucketPayloads, bucketPayloadRefs, bucketHistory, bucketQueueAll,
		bucketQueueOpen, bucketAppOpen, bucketReady, bucketDue, bucketStatus, bucketQueues, bucketParams, bucketAudit,
		bucketChecks, bucketKeys, bucketCodes, bucketCodeOwners, bucketVersions, bucketCrashes,
	}
}

// keyOf is the key of bucketKeys for an idempotency key of sender: the key
// first, so that the messages of one key, whatever their sender, are one
// run (message list --key). Neither holds a NUL byte (§2).
func keyOf(key, sender string) []byte {
	return append(append(append([]byte(key), 0), sender...), 0)
}

// appendMostly lists the buckets whose new keys mostly sort after every key
// they hold (ids are time-ordered UUIDv7, audit entries numbered): their
// pages are filled before they split, where bbolt's default leaves them
// half empty.
var appendMostly = map[string]bool{
	bucketMessages: true, bucketPayloads: true, bucketHistory: true, bucketStatus: true, bucketAudit: true,
}

// parseID turns a message id into its 16-byte key. Ids are UUIDs in their
// canonical 36-character form (domain.ValidID).
func parseID(id string) (uuid.UUID, error) {
	if len(id) != 36 {
		return uuid.UUID{}, domain.Invalidf("message id %q is not a UUID", id)
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.UUID{}, domain.Invalidf("message id %q is not a UUID", id)
	}
	return u, nil
}

// idString is the inverse of parseID. A key that is not 16 bytes long
// (only damage makes one) is shown in hex.
func idString(k []byte) string {
	if len(k) != 16 {
		return fmt.Sprintf("%x", k)
	}
	return uuid.UUID(k).String()
}

// storedID returns the message id an index entry holds (what, in its
// error): 16 bytes, or damage.
func storedID(b []byte, what string) (uuid.UUID, error) {
	if len(b) != 16 {
		return uuid.UUID{}, corrupt("%s holds %x, not a message id", what, b)
	}
	return uuid.UUID(b), nil
}

// sep ends a name inside a composite key. Names cannot contain it, so a
// name's keys never mix with those of a longer name that starts alike.
const sep = 0x00

// prefixOf returns name followed by sep: the common start of the composite
// keys of one queue or parameter.
func prefixOf(name string) []byte {
	k := make([]byte, 0, len(name)+1+8)
	k = append(k, name...)
	return append(k, sep)
}

// seqKey is queue 0x00 be64(seq): a queue's messages in seq order.
func seqKey(queue string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(prefixOf(queue), seq)
}

// appKey is queue 0x00 app_queue 0x00 be64(seq): the open messages of the
// queues app queues share (§10), each app queue's in seq order.
func appKey(queue, appQueue string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(prefixOf(queue), prefixOf(appQueue)...), seq)
}

// readyKey is stage(1) queue 0x00 be64(seq): the TBDL messages of the
// inbound queues, then those of the outbound ones, each queue's in seq
// order. Stage is I or O.
func readyKey(stage domain.Stage, queue string, seq uint64) []byte {
	return append(stagePrefix(stage), seqKey(queue, seq)...)
}

// stagePrefix is the first byte of the ready keys of a stage.
func stagePrefix(stage domain.Stage) []byte {
	if stage == domain.Inbound {
		return []byte{'I'}
	}
	return []byte{'O'}
}

// statusKey is status(1) id(16): the messages of a status in id order.
// The status byte is the status's place in indexOrder, so that the runs a
// delivery moves a message through — TBDL, DLNG, DLVD — are neighbours:
// the entries one step adds and removes (k+1 leaves TBDL's first place
// for DLNG, k leaves DLNG for DLVD's last place) share a page.
func statusKey(s domain.Status, id uuid.UUID) []byte {
	return append([]byte{indexCode(s)}, id[:]...)
}

// indexOrder is the order of the status index's runs (layout version 3).
// It is the file format — never reorder it; a new status goes at the end.
var indexOrder = [...]domain.Status{
	domain.StatusPEND, domain.StatusFAIL, domain.StatusNDLV, domain.StatusHOLD,
	domain.StatusDLVD, domain.StatusDLNG, domain.StatusTBDL, domain.StatusWAIT,
}

// indexBase is the status byte of indexOrder's first status; the bytes of
// layout version 2 (storedStatuses' order, from 0) are below it, so an
// entry of one layout is never read as one of the other.
const indexBase = 0x10

func indexCode(s domain.Status) byte {
	return indexBase + byte(slices.Index(indexOrder[:], s))
}

// statusOfIndex is the inverse of indexCode; ok is false for a byte that
// is no status's.
func statusOfIndex(c byte) (domain.Status, bool) {
	if c < indexBase || int(c-indexBase) >= len(indexOrder) {
		return "", false
	}
	return indexOrder[c-indexBase], true
}

// indexKey is the status index's key of a message in a store whose index
// is in the order of layout version oldOrder ? 2 : 3 (a store of version 2
// read without being upgraded keeps its index as it was).
func indexKey(s domain.Status, id uuid.UUID, oldOrder bool) []byte {
	if oldOrder {
		c, _ := statusCode(s)
		return append([]byte{c}, id[:]...)
	}
	return statusKey(s, id)
}

// indexStatus is the inverse of indexKey's first byte.
func indexStatus(c byte, oldOrder bool) (domain.Status, bool) {
	if oldOrder {
		s, err := statusOf(c)
		return s, err == nil && s != ""
	}
	return statusOfIndex(c)
}

// dueKey is be64(micros) id(16): WAIT messages by their next attempt.
func dueKey(at int64, id uuid.UUID) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at)), id[:]...)
}

// The kinds of check keys: a PEND message waits for its first check-back
// from when it was prepared, for the next from its last check.
const (
	checkKindPrepared = 'P'
	checkKindChecked  = 'C'
)

// checkKey is kind(1) be64(micros) id(16): the PEND messages that wait for
// a check-back (§9), by when their wait began — never checked ones by
// their creation, the others by their last check — so that a claim reads
// only the ones that are due.
func checkKey(m *domain.Message, id uuid.UUID) []byte {
	kind, since := byte(checkKindPrepared), m.CreatedAt
	if m.LastCheckAt != nil {
		kind, since = checkKindChecked, *m.LastCheckAt
	}
	k := binary.BigEndian.AppendUint64([]byte{kind}, uint64(since.UnixMicro()))
	return append(k, id[:]...)
}

// paramKey is name 0x00 sub: parameters by name, then sub.
func paramKey(name, sub string) []byte {
	return append(prefixOf(name), sub...)
}

// splitParamKey is the inverse of paramKey.
func splitParamKey(k []byte) (name, sub string) {
	i := bytes.IndexByte(k, sep)
	if i < 0 {
		return string(k), ""
	}
	return string(k[:i]), string(k[i+1:])
}

// seqBytes encodes an audit sequence number or a parameter value.
func seqBytes(n uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, n)
}

// validName rejects names that would break composite keys.
func validName(field, name string) error {
	if name == "" {
		return domain.Invalidf("%s is required", field)
	}
	if strings.IndexByte(name, sep) >= 0 {
		return domain.Invalidf("%s %q contains a NUL byte", field, name)
	}
	return nil
}
