// Package postgres is the PostgreSQL store of queuectl, which several nodes
// of a cluster share (§11). It implements store.Store on pgx's connection
// pool; the schema is in migrations/, applied by Migrate.
//
// Tables (see migrations/ for every column and index):
//
//	queues    one row per queue: qos, stage, stopped, last seq and the
//	          per-status counters
//	messages  message metadata; payload_id names the payload it shares
//	payloads  payload bytes, stored once and reference-counted
//	history   every status change of a message
//	params    tuning values
//	audit     operator actions
//	nodes     one row per start (incarnation) of a node
//	leases    queue ownership with its epoch
//	receiver_codes  the code each receiver's outbound queues carry (§3)
//
// A View is a REPEATABLE READ, read-only transaction: one snapshot. An
// Update is a READ COMMITTED transaction in which every change — and every
// read a decision may rest on — first locks the row of the message's queue.
// So the writers of one queue take turns, as on the embedded store, while
// writers of different queues do not wait for each other.
//
// The store also implements store.EngineStore, for a cluster of engine
// nodes sharing the database (§11): cluster.go has the nodes, leases and
// balancing, claim.go and record.go the engine's batched claims and
// outcomes, piped.go the engine's transactions, which pipeline BEGIN and
// COMMIT with their statements, wake.go the wakeups by LISTEN/NOTIFY.
//
// A writable transaction — an Update or an engine transaction — holds its
// writes to messages, history and payloads back (writes.go) and sends them
// set-based, one statement per kind whatever their number, before its next
// statement or with its commit: N messages sent, routed or settled cost a
// fixed number of statements. The writes are decided under the locks of
// their queues, which the transaction holds until it commits, so holding
// them back changes neither the lock order nor what others see.
package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Store is a queuectl store in a PostgreSQL database. It is safe for
// concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// hot is the pool of the engine's claims and outcomes, whose sessions
	// pin their plans (plans.go).
	hot *pgxpool.Pool
	// target names the database in messages, without its password.
	target  string
	commits atomic.Uint64
	// trace counts the statements and round trips of both pools.
	trace tracer
	// deadlocks counts the transactions PostgreSQL aborted to break a
	// deadlock (Deadlocks).
	deadlocks atomic.Uint64
	// listen is the connection configuration of the listener (Wakeups).
	listen *pgx.ConnConfig

	// wake carries the signals of Wakeups; the listener, started by the
	// first call to Wakeups, feeds it until Close.
	wake         chan struct{}
	listenOnce   sync.Once
	stopListener context.CancelFunc
	listenerDone chan struct{}

	// codes caches the receiver codes read (codes.go).
	codes codeCache

	// claims is where the next claim starts (queues take turns).
	claims store.ClaimCursor
	// leasesSeen is lease_changes as the last claim read it,
	// leasesAdopted as the last claim that took free leases read it
	// (adoptDue).
	leasesSeen, leasesAdopted atomic.Int64
	// inbound says the last claim left messages to route: the next one
	// routes first, and claims in the same transaction.
	inbound atomic.Bool
	// eo hands out the sequence numbers of EO messages.
	eo seqBlock

	// mu is held shared by every View and Update and exclusively by Close,
	// so that Close waits for the transactions under way.
	mu     sync.RWMutex
	closed bool
}

var _ store.Store = (*Store)(nil)

// maxAttempts bounds how often Update runs fn when PostgreSQL reports a
// deadlock or a serialization failure; each of those means another
// transaction went ahead, so the next attempt usually succeeds.
const maxAttempts = 10

// View runs fn in a read-only transaction that sees one snapshot.
func (s *Store) View(ctx context.Context, fn func(store.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.errClosed()
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.dbError(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	t := newTxn(ctx, tx, false)
	t.codes = &s.codes
	if err := fn(t); err != nil {
		return err
	}
	return s.dbError(tx.Commit(ctx))
}

// Update runs fn in a read-write transaction and commits it. When
// PostgreSQL aborts the transaction for a deadlock or a serialization
// failure, fn runs again in a new one, as the Store contract allows.
func (s *Store) Update(ctx context.Context, fn func(store.Writer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.retrying(ctx, func() error { return s.update(ctx, fn) })
}

// retrying runs a write transaction, attempt, until it commits: when
// PostgreSQL aborts it for a deadlock or a serialization failure it runs
// again, up to maxAttempts. Commits counts each commit.
func (s *Store) retrying(ctx context.Context, attempt func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.errClosed()
	}
	for n := 1; ; n++ {
		err := attempt()
		if err == nil {
			s.commits.Add(1)
			return nil
		}
		if deadlock(err) {
			s.deadlocks.Add(1)
		}
		if !retryable(err) || n == maxAttempts {
			return s.dbError(err)
		}
		// A short random pause, growing with the attempts, so that the
		// transactions that collided do not collide again.
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(n, 7)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

func (s *Store) update(ctx context.Context, fn func(store.Writer) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	t := newTxn(ctx, tx, true)
	t.eo, t.codes = &s.eo, &s.codes
	if err := fn(t); err != nil {
		return err
	}
	if err := t.flush(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// retryable reports whether err aborted a transaction that may succeed
// when run again: a deadlock or a serialization failure — or an
// idempotency key a concurrent transaction stored first, which the next run
// finds (store.Writer.Insert).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01" ||
		pe.Code == "23505" && pe.ConstraintName == "messages_key")
}

// deadlock reports whether err is PostgreSQL's abort of a deadlocked transaction.
func deadlock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}

// Commits returns how many write transactions committed since Open: the
// Updates and the engine's transactions (claims, outcomes, heartbeats...).
func (s *Store) Commits() uint64 { return s.commits.Load() }

// RoundTrips returns how many times the store waited for the database
// since Open: every statement (BEGIN and COMMIT included) counts one, and
// so does a batch of statements pipelined together. The listener of
// Wakeups does not count.
func (s *Store) RoundTrips() uint64 { return s.trace.roundTrips.Load() }

// Statements returns how many statements the store sent since Open, BEGIN
// and COMMIT included, whether alone or in a batch.
func (s *Store) Statements() uint64 { return s.trace.statements.Load() }

// Deadlocks returns how many of the store's transactions PostgreSQL aborted
// since Open to break a deadlock (each ran again). Transactions that lock
// in one order never deadlock: it stays 0.
func (s *Store) Deadlocks() uint64 { return s.deadlocks.Load() }

// Close waits for the transactions under way and closes the pool. Closing
// a closed store does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.listenOnce.Do(func() {}) // no listener starts any more
	if s.stopListener != nil {
		s.stopListener()
		<-s.listenerDone
	}
	s.pool.Close()
	s.hot.Close()
	return nil
}

func (s *Store) errClosed() error {
	return domain.Errorf(domain.ErrUnavailable, "the store %s is closed", s.target)
}

var _ store.EngineStore = (*Store)(nil)
