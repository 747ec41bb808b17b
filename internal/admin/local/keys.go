package local

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// keyedSends are the messages one send batch stored with a key, by sender
// and key: a repeat within the batch is answered from here, as a store need
// not read back rows its transaction has not written out yet.
type keyedSends map[[2]string]firstSend

// firstSend is what a key was first sent with: the message stored, and
// what §2 compares a repeat with.
type firstSend struct {
	msg       *domain.Message
	qos       domain.QoS
	receivers []string
	appQueue  string
	payload   []byte
}

func (k keyedSends) has(r *domain.SendRequest) bool {
	_, ok := k[[2]string{r.Sender, r.Key}]
	return r.Key != "" && ok
}

func (k keyedSends) add(r *domain.SendRequest, m *domain.Message) {
	if r.Key != "" {
		k[[2]string{r.Sender, r.Key}] = firstSend{msg: m, qos: r.QoS, receivers: r.Receivers, appQueue: r.AppQueue,
			payload: r.Payload}
	}
}

// repeat answers a send whose key its sender used already (§2): with the
// message of the key, when the send repeats it, else with a *keyConflict
// naming what differs.
func (k keyedSends) repeat(w store.Writer, r *domain.SendRequest) (*domain.Message, error) {
	first, ok := k[[2]string{r.Sender, r.Key}]
	if !ok {
		m, err := w.MessageByKey(r.Sender, r.Key)
		if err != nil {
			return nil, err
		}
		payload, err := w.Payload(m.ID)
		if err != nil {
			return nil, err
		}
		first = firstSend{msg: m, qos: m.QoS, receivers: m.Receivers, appQueue: m.AppQueue, payload: payload}
	}
	if diff := first.differences(r); len(diff) > 0 {
		return nil, &keyConflict{id: first.msg.ID, err: domain.WithHint(domain.ErrConflict,
			fmt.Sprintf("key %q of sender %s is message %s's, which differs in %s", r.Key, r.Sender, first.msg.ID,
				joinAnd(diff)),
			"a retry sends the message again as it was first sent; a new message needs a new key")}
	}
	return first.msg.Clone(), nil
}

// differences names what of a repeat differs from the key's first send, in
// the terms of §2: payload, receivers, qos and app queue. Headers and the
// interface are the producer's to vary.
func (f firstSend) differences(r *domain.SendRequest) []string {
	var diff []string
	switch {
	case len(f.payload) != len(r.Payload):
		diff = append(diff, fmt.Sprintf("payload (%d bytes then, %d now)", len(f.payload), len(r.Payload)))
	case !bytes.Equal(f.payload, r.Payload):
		diff = append(diff, fmt.Sprintf("payload (other bytes, %d both times)", len(r.Payload)))
	}
	then, now := slices.Sorted(slices.Values(f.receivers)), slices.Sorted(slices.Values(r.Receivers))
	if !slices.Equal(then, now) {
		diff = append(diff, fmt.Sprintf("receivers (%s then, %s now)", names(then), names(now)))
	}
	if f.qos != r.QoS {
		diff = append(diff, fmt.Sprintf("qos (%s then, %s now)", f.qos, r.QoS))
	}
	if f.appQueue != r.AppQueue {
		diff = append(diff, fmt.Sprintf("app queue (%s then, %s now)", orNone(f.appQueue), orNone(r.AppQueue)))
	}
	return diff
}

// keyConflict is a send that repeats a key with a different message: the
// batch stores nothing, and the refusal is audited with the key's message.
type keyConflict struct {
	id    string // the message of the key
	index int    // the request's position in the send
	err   error
}

func (e *keyConflict) Error() string { return e.err.Error() }
func (e *keyConflict) Unwrap() error { return e.err }

func names(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
