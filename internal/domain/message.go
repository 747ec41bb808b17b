package domain

import (
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Message is one message with the fields of §2. The payload is stored apart
// and is not part of this value; Size is its length.
type Message struct {
	ID          string     `json:"id" yaml:"id"`
	QoS         QoS        `json:"qos" yaml:"qos"`
	Sender      string     `json:"sender" yaml:"sender"`
	Receiver    string     `json:"receiver,omitempty" yaml:"receiver,omitempty"`
	Receivers   []string   `json:"receivers,omitempty" yaml:"receivers,omitempty"`
	Interface   string     `json:"interface,omitempty" yaml:"interface,omitempty"`
	AppQueue    string     `json:"app_queue,omitempty" yaml:"app_queue,omitempty"`
	Queue       string     `json:"queue" yaml:"queue"`
	Stage       Stage      `json:"stage" yaml:"stage"`
	Seq         uint64     `json:"seq" yaml:"seq"`
	Status      Status     `json:"status" yaml:"status"`
	Attempts    int        `json:"attempts" yaml:"attempts"`
	Crashes     int        `json:"crashes" yaml:"crashes"`
	Blacklisted bool       `json:"blacklisted" yaml:"blacklisted"`
	Error       string     `json:"error,omitempty" yaml:"error,omitempty"`
	ErrorClass  ErrorClass `json:"error_class,omitempty" yaml:"error_class,omitempty"`
	ParentID    string     `json:"parent_id,omitempty" yaml:"parent_id,omitempty"`
	// InboundQueue is, for a message that routing moved on to its
	// receiver's queue (§3: one message, one id), the inbound queue it
	// passed through, which counts it as DLVD.
	InboundQueue string `json:"inbound_queue,omitempty" yaml:"inbound_queue,omitempty"`
	// Key is the producer's idempotency key (§2), unique per sender: a
	// send that repeats it stores nothing new.
	Key           string            `json:"key,omitempty" yaml:"key,omitempty"`
	Headers       map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	Size          int64             `json:"size" yaml:"size"`
	CreatedAt     time.Time         `json:"created_at" yaml:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at" yaml:"updated_at"`
	NextAttemptAt *time.Time        `json:"next_attempt_at,omitempty" yaml:"next_attempt_at,omitempty"`
	Node          string            `json:"node,omitempty" yaml:"node,omitempty"`
	// Checks, LastCheckAt, LastAnswer and Stuck are the check-back of a
	// prepared (PEND) message (§9): how often the engine asked its producer
	// about it, when it last did, what the producer answered — or why there
	// was no answer — and whether the engine gave up asking, leaving the
	// message to an operator. A committed message keeps its count.
	Checks      int        `json:"checks,omitempty" yaml:"checks,omitempty"`
	LastCheckAt *time.Time `json:"last_check_at,omitempty" yaml:"last_check_at,omitempty"`
	LastAnswer  string     `json:"last_answer,omitempty" yaml:"last_answer,omitempty"`
	Stuck       bool       `json:"stuck,omitempty" yaml:"stuck,omitempty"`
	// Incarnation is, while the message is DLNG, the incarnation of Node that
	// claimed it: crash recovery of one dead incarnation touches only its
	// own messages (store.EngineStore).
	Incarnation uint64 `json:"-" yaml:"-"`
	// PayloadVersion is the version of the payload, 1 until an operator
	// edits it (message edit); filled only where asked for (message show).
	PayloadVersion int `json:"payload_version,omitempty" yaml:"payload_version,omitempty"`
	// History is filled only where asked for (message show).
	History []HistoryEntry `json:"history,omitempty" yaml:"history,omitempty"`
}

// HistoryEntry is one status change of a message.
type HistoryEntry struct {
	At     time.Time `json:"at" yaml:"at"`
	From   Status    `json:"from,omitempty" yaml:"from,omitempty"`
	To     Status    `json:"to" yaml:"to"`
	Node   string    `json:"node,omitempty" yaml:"node,omitempty"`
	Actor  string    `json:"actor" yaml:"actor"`
	Reason string    `json:"reason,omitempty" yaml:"reason,omitempty"`
}

// SentID is the id the producer got for m (§3): its own — a message keeps
// its id from send to delivery — or, for one of the messages a split into
// several receivers made, the id of the message it came from.
func (m *Message) SentID() string {
	if m.ParentID != "" {
		return m.ParentID
	}
	return m.ID
}

// NewID returns a new time-ordered message id (UUIDv7).
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// ValidID reports whether s has the form of a message id. A lookup of an id of
// the wrong form is a usage error, not a "not found".
func ValidID(s string) error {
	if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
		return Invalidf("message id %q is not a UUID (like 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f)", s)
	}
	return nil
}

// Clone returns a deep copy of m, so that a copy handed out cannot change a
// stored value.
func (m *Message) Clone() *Message {
	c := *m
	// slices.Clone and maps.Clone keep nil as nil and empty as empty, so a
	// copy compares equal to its original.
	c.Receivers = slices.Clone(m.Receivers)
	c.Headers = maps.Clone(m.Headers)
	if m.NextAttemptAt != nil {
		t := *m.NextAttemptAt
		c.NextAttemptAt = &t
	}
	if m.LastCheckAt != nil {
		t := *m.LastCheckAt
		c.LastCheckAt = &t
	}
	c.History = slices.Clone(m.History)
	return &c
}
