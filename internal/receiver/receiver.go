// Package receiver delivers message payloads to the endpoints of §8: http,
// exec, file and discard. Each delivery ends delivered (nil), or with an
// *Error whose class tells the engine whether to retry (transient) or stop
// (permanent).
package receiver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// DefaultTimeout bounds a delivery when the receiver sets no timeout.
const DefaultTimeout = 30 * time.Second

// Delivery is one attempt to hand a message to its receiver.
type Delivery struct {
	Message *domain.Message
	Payload []byte
	// Attempt counts from 1.
	Attempt int
}

// Receiver delivers payloads to one configured endpoint.
type Receiver interface {
	// Deliver returns nil when the receiver accepted the message, and an
	// *Error otherwise. It returns when ctx ends, with a transient error.
	Deliver(ctx context.Context, d Delivery) error
}

// Error is a failed delivery with its class.
type Error struct {
	Class domain.ErrorClass
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Transient returns an error the engine retries.
func Transient(format string, args ...any) error {
	return &Error{Class: domain.ErrorTransient, Err: fmt.Errorf(format, args...)}
}

// Permanent returns an error the engine does not retry.
func Permanent(format string, args ...any) error {
	return &Error{Class: domain.ErrorPermanent, Err: fmt.Errorf(format, args...)}
}

// ClassOf returns the class of a delivery error; an unclassified error is
// transient, since retrying is the safe default.
func ClassOf(err error) domain.ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return domain.ErrorTransient
}

// New builds the receiver of one configuration entry.
func New(name string, c config.Receiver) (Receiver, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	switch c.Type {
	case "http":
		return newHTTP(name, c.URLs, c.Headers, timeout)
	case "exec":
		return newExec(name, c, timeout)
	case "file":
		return newFile(name, c.Dir)
	case "discard":
		return Discard{}, nil
	}
	return nil, domain.Invalidf("receivers.%s: type %q must be http, exec, file or discard", name, c.Type)
}

// Build builds every configured receiver, by name.
func Build(cfgs map[string]config.Receiver) (map[string]Receiver, error) {
	out := make(map[string]Receiver, len(cfgs))
	for name, c := range cfgs {
		r, err := New(name, c)
		if err != nil {
			return nil, err
		}
		out[name] = r
	}
	return out, nil
}

// Discard accepts every message and keeps nothing (benchmarks).
type Discard struct{}

// Deliver accepts the message.
func (Discard) Deliver(ctx context.Context, _ Delivery) error {
	if err := ctx.Err(); err != nil {
		return Transient("delivery cancelled: %v", err)
	}
	return nil
}

// metadata are the message facts every receiver type passes on (§8).
type metadata struct {
	ID, Sender, Receiver, Interface, AppQueue, Seq string
}

func metaOf(m *domain.Message) metadata {
	return metadata{
		ID: m.ID, Sender: m.Sender, Receiver: m.Receiver, Interface: m.Interface,
		AppQueue: m.AppQueue, Seq: strconv.FormatUint(m.Seq, 10),
	}
}
