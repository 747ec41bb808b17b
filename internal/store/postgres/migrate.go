package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/queuectl/queuectl/internal/domain"
)

// The schema's versioned migrations, applied in version order by goose, each
// in a transaction of its own, and recorded in migrationTable.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

const migrationTable = "queuectl_migrations"

// migrationLockClass is the first key of the advisory lock that migrations
// run under; the second is the schema's name, so that the nodes of one
// cluster take turns while clusters in other schemas do not wait.
const migrationLockClass = 0x71756575 // "queu"

// Migration is one schema migration and whether the database has it.
type Migration struct {
	Version   int64      `json:"version" yaml:"version"`
	Name      string     `json:"name" yaml:"name"`
	Applied   bool       `json:"applied" yaml:"applied"`
	AppliedAt *time.Time `json:"applied_at,omitempty" yaml:"applied_at,omitempty"`
}

// Migrate applies the migrations the database at url lacks, under an
// advisory lock, so that nodes starting at once apply each migration once;
// the others wait and find nothing left to do. It returns the migrations it
// applied, none when the schema was current.
func Migrate(ctx context.Context, url string) ([]Migration, error) {
	pool, target, err := connect(ctx, url, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return migrate(ctx, pool, target)
}

// MigrationStatus lists every migration this build knows, with whether and
// when the database at url has applied it. It changes nothing.
func MigrationStatus(ctx context.Context, url string) ([]Migration, error) {
	pool, target, err := connect(ctx, url, 1)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	applied, err := appliedMigrations(ctx, pool, target)
	if err != nil {
		return nil, err
	}
	known, err := knownMigrations()
	if err != nil {
		return nil, err
	}
	for i, m := range known {
		if at, ok := applied[m.Version]; ok {
			known[i].Applied, known[i].AppliedAt = true, &at
		}
	}
	return known, nil
}

func migrate(ctx context.Context, pool *pgxpool.Pool, target string) ([]Migration, error) {
	if err := checkNotNewer(ctx, pool, target); err != nil {
		return nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files,
		goose.WithTableName(migrationTable),
		goose.WithSessionLocker(advisoryLock{}),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", target, err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("migrate %s: %w", target, ctx.Err())
		}
		return nil, fmt.Errorf("migrate %s: %w", target, err)
	}
	out := make([]Migration, 0, len(results))
	for _, r := range results {
		now := time.Now().UTC()
		out = append(out, Migration{Version: r.Source.Version, Name: path.Base(r.Source.Path), Applied: true, AppliedAt: &now})
	}
	return out, nil
}

// checkSchema makes sure the database has exactly the schema this build
// works with: every known migration applied, and none it does not know.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, target string) error {
	applied, err := appliedMigrations(ctx, pool, target)
	if err != nil {
		return err
	}
	known, err := knownMigrations()
	if err != nil {
		return err
	}
	var missing []string
	for _, m := range known {
		if _, ok := applied[m.Version]; !ok {
			missing = append(missing, m.Name)
		}
	}
	if err := newerThanKnown(applied, known, target); err != nil {
		return err
	}
	switch {
	case len(applied) == 0:
		return domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("the PostgreSQL database %s has no queuectl schema", target),
			"run 'queuectl migrate' to create it ('queuectl serve' does too)")
	case len(missing) > 0:
		return domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("the queuectl schema in %s lacks %d migration(s) this queuectl needs: %v", target, len(missing), missing),
			"run 'queuectl migrate' to apply them ('queuectl serve' does too)")
	}
	return nil
}

// checkNotNewer refuses a schema that a newer queuectl migrated: this build
// would misread it.
func checkNotNewer(ctx context.Context, pool *pgxpool.Pool, target string) error {
	applied, err := appliedMigrations(ctx, pool, target)
	if err != nil {
		return err
	}
	known, err := knownMigrations()
	if err != nil {
		return err
	}
	return newerThanKnown(applied, known, target)
}

func newerThanKnown(applied map[int64]time.Time, known []Migration, target string) error {
	latest := known[len(known)-1].Version
	for v := range applied {
		if v > latest {
			return domain.WithHint(domain.ErrUnavailable,
				fmt.Sprintf("the queuectl schema in %s is at version %d; this queuectl knows versions up to %d", target, v, latest),
				"use the newer queuectl that migrated it")
		}
	}
	return nil
}

// appliedMigrations reads the versions the database has applied, with when;
// none when it has no migration table yet. It fails when the URL's
// search_path names no schema that exists.
func appliedMigrations(ctx context.Context, pool *pgxpool.Pool, target string) (map[int64]time.Time, error) {
	var schema *string
	var table *string
	err := pool.QueryRow(ctx, `SELECT current_schema(), to_regclass($1)::text`, migrationTable).Scan(&schema, &table)
	if err != nil {
		return nil, unreachable(target, err)
	}
	if schema == nil {
		return nil, domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("the PostgreSQL database %s has no schema to keep queuectl's tables in: its search_path names none that exists", target),
			"create the schema (CREATE SCHEMA name), or fix search_path in the store URL")
	}
	applied := map[int64]time.Time{}
	if table == nil {
		return applied, nil
	}
	// goose records a timestamp without time zone, in the server's zone.
	rows, err := pool.Query(ctx, `SELECT version_id, max(tstamp) AT TIME ZONE current_setting('TimeZone')
		FROM `+migrationTable+` WHERE is_applied AND version_id > 0 GROUP BY version_id`)
	if err != nil {
		return nil, fmt.Errorf("read the migrations of %s: %w", target, err)
	}
	var v int64
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&v, &at}, func() error {
		applied[v] = at.UTC()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the migrations of %s: %w", target, err)
	}
	return applied, nil
}

// knownMigrations lists the migrations embedded in this build, in version
// order; goose names the version by the number the file name starts with.
func knownMigrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		v, err := goose.NumericComponent(e.Name())
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name()})
	}
	slices.SortFunc(out, func(a, b Migration) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// advisoryLock is goose's session lock: a PostgreSQL advisory lock on the
// migration connection, waited for (not polled) and scoped to the schema.
type advisoryLock struct{}

func (advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema()))`, migrationLockClass)
	return err
}

func (advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`, migrationLockClass)
	return err
}
