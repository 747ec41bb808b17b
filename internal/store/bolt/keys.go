package bolt

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// Bucket names; see the package comment for what each holds.
const (
	bucketMeta      = "meta"
	bucketMessages  = "messages"
	bucketPayloads  = "payloads"
	bucketHistory   = "history"
	bucketQueueAll  = "queue_all"
	bucketQueueOpen = "queue_open"
	bucketStatus    = "status"
	bucketQueues    = "queues"
	bucketParams    = "params"
	bucketAudit     = "audit"
)

// bucketNames lists every bucket a store has; Open creates the missing ones.
func bucketNames() []string {
	return []string{
		bucketMeta, bucketMessages, bucketPayloads, bucketHistory, bucketQueueAll,
		bucketQueueOpen, bucketStatus, bucketQueues, bucketParams, bucketAudit,
	}
}

// sep ends a name inside a composite key. Names cannot contain it, so a
// name's keys never mix with those of a longer name that starts alike.
const sep = 0x00

// prefixOf returns name followed by sep: the common start of the composite
// keys of one message, queue or status.
func prefixOf(name string) []byte {
	k := make([]byte, 0, len(name)+1+8)
	k = append(k, name...)
	return append(k, sep)
}

// historyKey is id 0x00 be32(n): a message's history in order.
func historyKey(id string, n uint32) []byte {
	return binary.BigEndian.AppendUint32(prefixOf(id), n)
}

// seqKey is queue 0x00 be64(seq): a queue's messages in seq order.
func seqKey(queue string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(prefixOf(queue), seq)
}

// statusKey is status 0x00 id: the messages of a status in id order.
func statusKey(s domain.Status, id string) []byte {
	return append(prefixOf(string(s)), id...)
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
