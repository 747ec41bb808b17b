package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Wakeups through LISTEN/NOTIFY (§11): a transaction that makes messages
// ready for delivery — a send, a commit, a resend or release, a queue
// started, a routed message, a crash recovery — or that frees a queue's
// lease notifies wakeChannel with its schema's name, delivered at its
// commit. Every store that serves an engine listens on a connection of its
// own and passes the notifications of its schema on to Wakeups.

const wakeChannel = "queuectl_wake"

// notifySQL notifies the nodes of this schema. PostgreSQL folds the equal
// notifications of one transaction into one.
const notifySQL = `SELECT pg_notify('` + wakeChannel + `', current_schema())`

// SerialWrites is false: PostgreSQL commits transactions side by side.
func (s *Store) SerialWrites() bool { return false }

// Wakeups delivers a value when messages may have become ready, here or on
// another node: a hint that coalesces many notifications into one. The
// first call starts the listener; it runs until Close and reconnects when
// its connection fails, with a wakeup each time, since notifications may
// have been missed meanwhile.
func (s *Store) Wakeups() <-chan struct{} {
	s.listenOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopListener, s.listenerDone = cancel, make(chan struct{})
		go s.listenLoop(ctx)
	})
	return s.wake
}

// signal wakes the engine, unless a wakeup is pending already.
func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// listenLoop listens until ctx ends, reconnecting after a failure with a
// pause that grows to 5s.
func (s *Store) listenLoop(ctx context.Context) {
	defer close(s.listenerDone)
	pause := 50 * time.Millisecond
	for {
		connected := s.listenOn(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			pause = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// listenOn makes one listening connection and passes its notifications
// on until it fails; it reports whether it got as far as listening.
func (s *Store) listenOn(ctx context.Context) bool {
	conn, err := pgx.ConnectConfig(ctx, s.listen.Copy())
	if err != nil {
		return false
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return false
	}
	if _, err := conn.Exec(ctx, `LISTEN `+wakeChannel); err != nil {
		return false
	}
	s.signal() // what happened while nobody listened
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if n.Payload == schema {
			s.signal()
		}
	}
}
