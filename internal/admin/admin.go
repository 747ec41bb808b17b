// Package admin is the one service through which every front end — the CLI
// in embedded mode, the HTTP API and the TUI — reads and changes queuectl's
// state. The local implementation works on a store; a remote client will
// implement the same interface over HTTP.
package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// Service is what an operator or producer can do.
type Service interface {
	// Send validates every request, then stores them as inbound messages in
	// batches, and returns the stored messages in request order. An invalid
	// request stores nothing and names its position (1-based).
	Send(ctx context.Context, reqs []domain.SendRequest) ([]*domain.Message, error)
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
	Operator
	// RecordRefusal writes the audit entry of a request that a front end
	// refused before it reached the service.
	RecordRefusal(ctx context.Context, r Refusal) error
	// Close releases the service's store or connection.
	Close() error
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
	After       string
	Limit       int
}

// RequestError says which request of a batch (0-based Index) was refused.
type RequestError struct {
	Index int
	Err   error
}

func (e *RequestError) Error() string { return fmt.Sprintf("message %d: %v", e.Index+1, e.Err) }

// Unwrap returns the reason, which carries the error's kind.
func (e *RequestError) Unwrap() error { return e.Err }
