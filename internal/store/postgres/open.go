package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// DefaultConnectTimeout bounds a connection attempt when the URL sets no
// connect_timeout, so that an unreachable server is reported, not waited for.
const DefaultConnectTimeout = 5 * time.Second

// Options configure Open.
type Options struct {
	// MaxConns bounds the connection pool; zero means 4, enough for an admin
	// command.
	MaxConns int32
	// Migrate applies the pending schema migrations, under the migration
	// lock, before the store is used (serve). Without it, Open refuses a
	// database whose schema is not the one this build expects.
	Migrate bool
	// LeaseTTL is the cluster's cluster.lease_ttl (serve). With it, the
	// server ends a session that stays idle inside a transaction for
	// idleInTransaction(LeaseTTL): a node frozen inside a transaction (a
	// SIGSTOP, a frozen virtual machine) loses its row locks long before
	// its lease expires, so the live nodes that take its queues over never
	// wait for it.
	LeaseTTL time.Duration
}

// idleInTransaction is how long a session of a node with lease TTL ttl may
// stay idle inside a transaction: a quarter of the TTL, at least 100ms.
func idleInTransaction(ttl time.Duration) time.Duration {
	return max(ttl/4, 100*time.Millisecond)
}

// unreachableHint tells the user what to do about a database that does not answer.
const unreachableHint = "check that PostgreSQL is running and that the store URL (--store, QUEUECTL_STORE or store: in the config file) is right"

// Open connects to the database that url (postgres://…) names, checks or
// migrates its schema, and returns the store. The URL's search_path, if
// set, chooses the schema the tables live in. A database that cannot be
// reached is an error wrapping domain.ErrUnavailable; the password of the
// URL appears in no error.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	s := &Store{wake: make(chan struct{}, 1)}
	s.leasesAdopted.Store(-1) // the first claim takes what it may
	s.inbound.Store(true)     // and routes what it finds
	var hot *pgxpool.Config
	pool, target, err := connect(ctx, url, opts.MaxConns, func(cfg *pgxpool.Config) {
		if opts.LeaseTTL > 0 {
			cfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = fmt.Sprint(idleInTransaction(opts.LeaseTTL).Milliseconds())
		}
		s.listen = cfg.ConnConfig.Copy()
		s.listen.RuntimeParams["application_name"] += " wakeups"
		cfg.ConnConfig.Tracer = &s.trace
		hot = cfg.Copy()
	})
	if err != nil {
		return nil, err
	}
	s.pool, s.target = pool, target
	// The pool of the engine's claims and outcomes: a few connections,
	// which connect when the engine first claims.
	hot.MaxConns = min(hot.MaxConns, hotConns)
	hot.MinConns = 0
	pinPlans(hot.ConnConfig.RuntimeParams)
	if s.hot, err = pgxpool.NewWithConfig(ctx, hot); err != nil {
		pool.Close()
		return nil, unreachable(target, err)
	}
	if opts.Migrate {
		_, err = migrate(ctx, pool, target)
	} else {
		err = checkSchema(ctx, pool, target)
	}
	if err != nil {
		pool.Close()
		s.hot.Close()
		return nil, err
	}
	return s, nil
}

// Target returns the database the store is connected to, as a URL without
// its password.
func (s *Store) Target() string { return s.target }

// connect builds the pool and makes one connection, so that a database
// that is down is reported here.
func connect(ctx context.Context, url string, maxConns int32, configure ...func(*pgxpool.Config)) (*pgxpool.Pool, string, error) {
	target := config.RedactURL(url)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx quotes the URL in its error (cannot parse `…`: reason);
		// keep only the reason.
		reason := err.Error()
		if i := strings.Index(reason, "`: "); i >= 0 {
			reason = reason[i+3:]
		}
		return nil, target, domain.Invalidf("the store URL %s is not a PostgreSQL connection URL: %s", target, reason)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "queuectl"
	}
	cfg.MaxConns = 4
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	for _, f := range configure {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, target, unreachable(target, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, target, fmt.Errorf("connect to %s: %w", target, ctxErr)
		}
		if connectionLost(err) {
			return nil, target, downError{unreachable(target, err)}
		}
		return nil, target, unreachable(target, err)
	}
	return pool, target, nil
}

// downError marks a failure to connect that ends when the database is back
// (refused, timed out, shutting down or starting up), as against one that a
// setting causes (authentication, no such database).
type downError struct{ error }

func (e downError) Unwrap() error { return e.error }

// Down reports whether err is a failure to connect to a database that is
// down or out of reach for now: trying again later may succeed.
func Down(err error) bool {
	var d downError
	return errors.As(err, &d)
}

// unreachable explains a failed connection: the server's own reason
// (refused, unknown host, authentication failed, no such database), never
// the URL's password.
func unreachable(target string, err error) error {
	reason := err.Error()
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		// Unwrapped, the error has the reason without pgx's prefix, which
		// repeats the user and database the target names already.
		if inner := errors.Unwrap(ce); inner != nil {
			reason = inner.Error()
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		reason = pe.Message
	}
	// pgx joins the failures of every address it tried, one per line; the
	// first says why.
	reason, _, _ = strings.Cut(reason, "\n")
	return domain.WithHint(domain.ErrUnavailable,
		fmt.Sprintf("cannot connect to the PostgreSQL database %s: %s", target, reason), unreachableHint)
}

// dbError turns a failure of the connection during a transaction into an
// error wrapping domain.ErrUnavailable, and a full disk into one wrapping
// domain.ErrNoSpace too; any other error is returned as it is.
func (s *Store) dbError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" { // disk_full
		return domain.NoSpace("the PostgreSQL database "+s.target, err)
	}
	if err == nil || !connectionLost(err) {
		return err
	}
	return domain.WithHint(domain.ErrUnavailable,
		fmt.Sprintf("the PostgreSQL database %s is unavailable: %v", s.target, err), unreachableHint)
}

// connectionLost reports whether err means the database went away: the
// connection failed or was closed, or the server is shutting down.
func connectionLost(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		// Class 08 is connection exceptions; 57P01-57P03 are the server
		// shutting down or starting; 53300 is too many connections.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" ||
			pe.Code == "57P03" || pe.Code == "53300"
	case errors.As(err, &ce), errors.As(err, &ne):
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		pgconn.SafeToRetry(err)
}
