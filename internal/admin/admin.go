// Package admin is the one service through which every front end — the CLI,
// the HTTP API and the TUI — reads and changes queuectl's state. The local
// implementation (admin/local) works on a store; the remote client
// (admin/remote) implements the same interface over the HTTP API; admintest
// is the suite both pass. The seam has its own types and sentinel errors:
// nothing of the store's leaks through it.
package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// ErrStop, returned by the function a walk (Queues, QueueMessages, Messages,
// Audit) calls for each item, ends the walk early without an error.
var ErrStop = errors.New("stop the walk")

// Service is what an operator or producer can do.
type Service interface {
	// Send validates every request, then stores them as inbound messages in
	// batches, and returns the stored messages in request order. An invalid
	// request stores nothing and names its position (1-based). A request
	// with a key its sender used already stores nothing: it answers with
	// the message of that key, marked Duplicate, or — when it differs from
	// that message in payload, receivers, qos or app queue — fails its
	// batch with a conflict naming what differs (§2).
	Send(ctx context.Context, reqs []domain.SendRequest) ([]Sent, error)
	// Queues calls fn for each queue matching f, in name order.
	Queues(ctx context.Context, f QueueFilter, fn func(*domain.Queue) error) error
	// Queue returns one queue's summary.
	Queue(ctx context.Context, name string) (*domain.Queue, error)
	// QueueMessages calls fn for a queue's messages in seq order.
	QueueMessages(ctx context.Context, name string, p QueueMessagesParams, fn func(*domain.Message) error) error
	// Messages calls fn for each message matching f, in id (creation) order.
	Messages(ctx context.Context, f MessageFilter, fn func(*domain.Message) error) error
	// Message returns one message with its history.
	Message(ctx context.Context, id string) (*domain.Message, error)
	// Payload returns a message's payload, byte for byte.
	Payload(ctx context.Context, id string) ([]byte, error)
	// Names lists the names of one kind that start with a prefix, in order:
	// what shell completion offers, from the store or server the commands
	// work on.
	Names(ctx context.Context, p NamesParams) ([]string, error)
	Operator
	Editor
	EOIO
	Cluster
	Who
	// RecordRefusal writes the audit entry of a request that a front end
	// refused before it reached the service.
	RecordRefusal(ctx context.Context, r Refusal) error
	// Close releases the service's store or connection.
	Close() error
}

// Sent is the answer to one send request: the message it stored, or, for
// a repeat of a key (§2), the message stored before under that key, as it
// is now.
type Sent struct {
	*domain.Message `yaml:",inline"`
	// Duplicate marks the message a repeated key found: this send stored
	// nothing.
	Duplicate bool `json:"duplicate" yaml:"duplicate"`
}

// SentMessages returns the messages of a send's answers, in order.
func SentMessages(sent []Sent) []*domain.Message {
	msgs := make([]*domain.Message, len(sent))
	for i, s := range sent {
		msgs[i] = s.Message
	}
	return msgs
}

// QueueFilter selects queues for `queue list`. Empty fields select all.
type QueueFilter struct {
	QoS       []domain.QoS
	Stages    []domain.Stage
	States    []domain.QueueState
	Receivers []string
	// Name is a shell pattern (path.Match syntax) such as XBQ*.
	Name string
	// After is the name cursor; Limit 0 is no limit.
	After string
	Limit int
}

// QueueMessagesParams select part of a queue for `queue show`.
type QueueMessagesParams struct {
	// All includes delivered and failed messages; by default only open ones.
	All      bool
	AfterSeq uint64
	Limit    int
}

// MessageFilter selects messages for `message list`. Empty fields select all.
type MessageFilter struct {
	Statuses  []domain.Status
	Queues    []string
	Receivers []string
	Senders   []string
	AppQueues []string
	ErrorText string
	// OlderThan and NewerThan bound created_at: older than (before) and newer than (after).
	OlderThan   time.Time
	NewerThan   time.Time
	Blacklisted *bool
	// Stuck, when set, selects the stuck transactions (PEND messages the
	// check-back gave up on, §9), or the messages that are not.
	Stuck *bool
	// Key selects the messages sent with this idempotency key (§2), by
	// any sender.
	Key string
	// NewestFirst lists in descending id order; After is then the last id
	// of the previous page all the same.
	NewestFirst bool
	After       string
	Limit       int
}

// NameKind is a kind of name an operator types.
type NameKind string

// The kinds of names Names lists.
const (
	NameQueue    NameKind = "queue"    // physical queues
	NameReceiver NameKind = "receiver" // configured receivers and those of existing outbound queues
	NameStatus   NameKind = "status"   // message statuses (§4)
	NameState    NameKind = "state"    // queue states (§5)
	NameParam    NameKind = "param"    // tuning parameters (§7)
	NameSub      NameKind = "sub"      // the subparameters of NamesParams.Param
)

// NameKinds lists the kinds.
var NameKinds = []NameKind{NameQueue, NameReceiver, NameStatus, NameState, NameParam, NameSub}

// NamesParams select names for Names.
type NamesParams struct {
	Kind   NameKind
	Prefix string
	// Param is the tuning parameter whose subparameters NameSub lists.
	Param string
	// After, if set, lists only the names that sort after it: the next
	// page of a list that Limit cut.
	After string
	// Limit bounds the list; 0 means DefaultNames.
	Limit int
}

// DefaultNames is how many names Names lists unless asked for fewer.
const DefaultNames = 200

// RequestError says which request of a batch (0-based Index) was refused.
type RequestError struct {
	Index int
	Err   error
}

func (e *RequestError) Error() string { return fmt.Sprintf("message %d: %v", e.Index+1, e.Err) }

// Unwrap returns the reason, which carries the error's kind.
func (e *RequestError) Unwrap() error { return e.Err }
