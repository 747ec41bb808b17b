// Package audit implements `queuectl audit`: the log of operator actions,
// written in the same transaction as each change (§6).
package audit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl audit` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "The log of operator actions: who changed what, when, and how it went",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil))
	return cmd
}

// ListOptions are the parsed flags of `audit list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Since   string
	Actor   string
	Action  string
	Result  string
	Reverse bool
	After   uint64
	Limit   int
}

// NewListCmd builds `audit list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List audit entries, newest first: time, actor, source, action, targets, result",
		Long: `List the audit log, newest first (--reverse: oldest first). Every operator
action is there — resend, fail, release, commit, rollback, stop, start, tune,
purge — including those that were refused or changed nothing, each written
in the same transaction as the change itself. An action over many targets
has one entry per chunk of up to 1000 targets.

RESULT is ok (every target changed), conflict (some were skipped or not
found; DETAIL says how many and why), denied (not allowed) or error
(refused, e.g. a malformed id or value: nothing changed). TARGETS shows the
target, or how many there were; -o json lists them all.

Paging: --limit N (default 100; 0 = all) and --after SEQ, the SEQ (-o wide)
of the last entry of the previous page: the next page goes on after it, in
the list's order. --since takes a duration back from now (90s, 15m, 2h, 7d)
or an RFC 3339 time. --action and --result select one action (message.fail,
tune.set, ...) and one result.`,
		Example: `  queuectl audit list --since 1h
  queuectl audit list --result error
  queuectl audit list --action message.fail --actor local:ops -o wide
  queuectl audit list --since 2026-03-01T00:00:00Z --reverse --limit 0 -o jsonl`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Since, "since", "", "only entries from this long ago (or this time) on")
	fl.StringVar(&opts.Actor, "actor", "", "only entries of this actor (e.g. local:alice, or a token name)")
	fl.StringVar(&opts.Action, "action", "", "only entries of this action (message.resend, tune.set, purge, ...)")
	fl.StringVar(&opts.Result, "result", "", "only entries with this result: ok, conflict, denied or error")
	fl.BoolVar(&opts.Reverse, "reverse", false, "oldest first")
	fl.Uint64Var(&opts.After, "after", 0, "start after the entry with this SEQ (paging)")
	fl.IntVar(&opts.Limit, "limit", 100, "at most this many entries (0 = all, streamed)")
	_ = cmd.RegisterFlagCompletionFunc("action", cmdutil.CompleteValues(admin.AuditActions...))
	_ = cmd.RegisterFlagCompletionFunc("result", cmdutil.CompleteValues(domain.AuditResults...))
	return cmd
}

// RunList prints the audit entries.
func RunList(ctx context.Context, opts *ListOptions) error {
	if opts.Limit < 0 {
		return domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	since, err := cmdutil.ParseAge("since", opts.Since, opts.Now())
	if err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	f := admin.AuditFilter{Since: since, Actor: opts.Actor, Action: opts.Action, Result: opts.Result,
		OldestFirst: opts.Reverse, After: opts.After, Limit: opts.Limit}
	return cmdutil.PrintPage(opts.IO.Out, format, opts.Hintf, cmdutil.Page[*domain.AuditEntry]{
		Columns: columns,
		Cursor:  func(e *domain.AuditEntry) string { return strconv.FormatUint(e.Seq, 10) },
		Limit:   f.Limit,
		Walk: func(limit int, add func(*domain.AuditEntry) error) error {
			f.Limit = limit
			return svc.Audit(ctx, f, add)
		},
		Empty: "no audit entries match",
	})
}

var columns = []output.Column[*domain.AuditEntry]{
	{Header: "SEQ", Max: 10, Wide: true, Value: func(e *domain.AuditEntry) string { return strconv.FormatUint(e.Seq, 10) }},
	{Header: "AT", Max: 20, Value: func(e *domain.AuditEntry) string { return output.Time(&e.At) }},
	{Header: "ACTOR", Max: 30, Clip: 30, Value: func(e *domain.AuditEntry) string { return e.Actor }},
	{Header: "SOURCE", Max: 30, Clip: 30, Value: func(e *domain.AuditEntry) string { return output.Dash(e.Source) }},
	{Header: "ACTION", Max: 17, Value: func(e *domain.AuditEntry) string { return e.Action }},
	{Header: "TARGETS", Max: 60, Clip: 60, Value: targets},
	{Header: "RESULT", Max: 8, Value: func(e *domain.AuditEntry) string { return e.Result }},
	{Header: "DETAIL", Max: 60, Clip: 60, Value: func(e *domain.AuditEntry) string { return output.Dash(e.Detail) }},
}

// targets shows the one target, or how many there were.
func targets(e *domain.AuditEntry) string {
	switch len(e.Targets) {
	case 0:
		return "-"
	case 1:
		return e.Targets[0]
	}
	return fmt.Sprintf("%s targets", cmdutil.FormatCount(len(e.Targets)))
}
