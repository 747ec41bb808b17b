// Package pgtest gives tests a PostgreSQL database of their own: a new,
// empty schema in the database that QUEUECTL_TEST_PG_URL names, chosen by
// the search_path of the URL the test gets and dropped when the test ends.
// Tests in parallel, in one process or in many, never see each other's
// tables. Without QUEUECTL_TEST_PG_URL the tests are skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/store/postgres"
)

// EnvURL names the environment variable with the database the tests use.
const EnvURL = "QUEUECTL_TEST_PG_URL"

// SkipReason is why PostgreSQL tests skip when EnvURL is not set.
const SkipReason = EnvURL + " is not set: skipping the tests that need PostgreSQL " +
	"(set it to a database URL, e.g. postgres://postgres@127.0.0.1:5432/queuectl_test?sslmode=disable)"

// BaseURL returns the database URL of EnvURL, skipping t when it is unset.
func BaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skip(SkipReason)
	}
	return base
}

// URL returns the URL of a new, empty schema for t, dropped at t's cleanup
// (after the cleanups registered later, such as closing a store).
func URL(t testing.TB) string {
	t.Helper()
	u, drop, err := NewSchema(context.Background(), BaseURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, drop()) })
	return u
}

// Open returns a store on a new, migrated schema for t. At cleanup it checks
// the store's invariants and closes it.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	u := URL(t)
	st, err := postgres.Open(context.Background(), u, postgres.Options{Migrate: true, MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, st.Check(context.Background()), "the store's invariants hold")
		require.NoError(t, st.Close())
	})
	return st
}

// NewSchema creates a schema with a random name in the database of base
// and returns base with search_path set to it, and a function that drops
// the schema with everything in it.
func NewSchema(ctx context.Context, base string) (schemaURL string, drop func() error, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("%s is not a URL: %w", EnvURL, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "queuectl_test_" + hex.EncodeToString(b[:])
	if err := exec(ctx, base, `CREATE SCHEMA `+schema); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return exec(ctx, base, `DROP SCHEMA `+schema+` CASCADE`)
	}
	return u.String(), drop, nil
}

// exec runs one statement on a connection of its own.
func exec(ctx context.Context, base, sql string) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", EnvURL, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// Database returns the URL of a new, empty database for t, in the server
// of EnvURL, dropped at t's cleanup. A test that reads the server's
// statistics per database (pg_stat_statements) gets a database of its own,
// so that no other test's statements count in them.
func Database(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	u, err := url.Parse(base)
	require.NoError(t, err, "%s is not a URL", EnvURL)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "queuectl_test_" + hex.EncodeToString(b[:])
	require.NoError(t, exec(context.Background(), base, `CREATE DATABASE `+name))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, exec(ctx, base, `DROP DATABASE `+name+` WITH (FORCE)`))
	})
	u.Path = "/" + name
	return u.String()
}
