// Package migrate implements `queuectl migrate`: apply the PostgreSQL
// schema, or show which of its migrations a database has.
package migrate

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/postgres"
)

// Options are the parsed flags of `migrate`.
type Options struct {
	IO     *cmdutil.IOStreams
	Config func() (*config.Config, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)
	// Announce names the target a context chose, before the schema changes.
	Announce func()

	Status bool
}

// NewCmd builds `queuectl migrate`.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Config: f.Config, Format: f.Format, Hintf: f.Hintf, Announce: f.AnnounceContextTarget}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or update the queuectl schema in a PostgreSQL database",
		Long: `Apply the migrations of the queuectl schema that the PostgreSQL database named
by --store (or QUEUECTL_STORE, store: in the config file, a context) lacks.
Each migration runs in a transaction of its own, under an advisory lock: any
number of migrate and serve processes may start at once, and each migration
is applied once. 'queuectl serve' migrates too; other commands refuse a
database whose schema is not the one they expect.

The tables are created in the first schema of the URL's search_path
(postgres://…/db?search_path=queuectl), which must exist.

--status lists the migrations this queuectl knows and which the database has
applied, and changes nothing.`,
		Example: `  queuectl migrate --store postgres://queuectl@db.example/queuectl
  QUEUECTL_STORE=postgres://queuectl@db.example/queuectl queuectl migrate --status
  queuectl migrate --status -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Status, "status", false, "list the migrations and whether the database has them; change nothing")
	cmdutil.Acts(cmd)
	return cmd
}

// Run migrates, or prints the migration status.
func Run(ctx context.Context, opts *Options) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	if c.ServerURL != "" {
		return domain.WithHint(domain.ErrInvalid, "migrate works on the database, not through a server (--server)",
			"name the database with --store postgres://…")
	}
	loc, err := cmdutil.ResolveStore(c)
	if err != nil {
		return err
	}
	if loc.Postgres == "" {
		return domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("the store %s is a bolt file, which needs no migration; migrate applies the PostgreSQL schema", loc.Path),
			"name the database with --store postgres://…")
	}
	target := config.RedactURL(loc.Postgres)
	var list []postgres.Migration
	if opts.Status {
		list, err = postgres.MigrationStatus(ctx, loc.Postgres)
	} else {
		if opts.Announce != nil {
			opts.Announce()
		}
		list, err = postgres.Migrate(ctx, loc.Postgres)
	}
	if err != nil {
		return err
	}
	if list == nil {
		list = []postgres.Migration{}
	}
	if !opts.Status && len(list) == 0 {
		opts.Hintf("the schema in %s is up to date", target)
	}
	if !opts.Status && format.Tabular() {
		for _, m := range list {
			if _, err := fmt.Fprintf(opts.IO.Out, "applied %s\n", m.Name); err != nil {
				return err
			}
		}
		return nil
	}
	return output.Value(opts.IO.Out, format, list, func(w io.Writer, _ bool) error {
		return printStatus(w, list)
	}, func() []string {
		ids := make([]string, len(list))
		for i, m := range list {
			ids[i] = m.Name
		}
		return ids
	})
}

// printStatus prints the migrations as a table.
func printStatus(w io.Writer, list []postgres.Migration) error {
	cols := []output.Column[postgres.Migration]{
		{Header: "VERSION", Value: func(m postgres.Migration) string { return fmt.Sprint(m.Version) }},
		{Header: "NAME", Value: func(m postgres.Migration) string { return m.Name }},
		{Header: "STATE", Value: func(m postgres.Migration) string {
			if m.Applied {
				return "applied"
			}
			return "pending"
		}},
		{Header: "APPLIED", Value: func(m postgres.Migration) string { return output.Time(m.AppliedAt) }},
	}
	l := output.NewList(w, output.Table, cols, func(m postgres.Migration) string { return m.Name })
	for _, m := range list {
		if err := l.Add(m); err != nil {
			return err
		}
	}
	return l.Close()
}
