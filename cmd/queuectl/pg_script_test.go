package main

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// scriptCondition answers the scripts' own conditions: [pg] holds when a
// PostgreSQL database for tests is given (QUEUECTL_TEST_PG_URL), so that a
// script can skip without one: [!pg] skip.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "pg":
		return os.Getenv(pgtest.EnvURL) != "", nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdPGStore creates a new, empty schema in the database of
// QUEUECTL_TEST_PG_URL and sets the environment variable NAME to its URL
// (its search_path names the schema); the schema is dropped when the script
// ends: pgstore NAME.
func cmdPGStore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgstore NAME")
	}
	base := os.Getenv(pgtest.EnvURL)
	if base == "" {
		ts.Fatalf("pgstore: %s is not set; guard the script with [!pg] skip", pgtest.EnvURL)
	}
	u, drop, err := pgtest.NewSchema(context.Background(), base)
	ts.Check(err)
	ts.Defer(func() { ts.Check(drop()) })
	ts.Setenv(args[0], u)
}

// cmdPGExec runs SQL statements on the database of a store URL, for what
// only a cluster's nodes write (nodes and leases rows): pgexec URL SQL.
func cmdPGExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: pgexec URL SQL")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, args[0])
	ts.Check(err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, args[1])
	ts.Check(err)
}
