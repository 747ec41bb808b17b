package tx

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// ActOptions are the parsed flags of `tx commit` and `tx rollback`.
type ActOptions struct {
	cmdutil.BulkOptions
	Now func() time.Time
	// Filters select the PEND messages of --all.
	Filters
	// Commit is true for `tx commit`, false for `tx rollback`.
	Commit bool
}

// NewCommitCmd builds `tx commit`.
func NewCommitCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd := newActCmd(f, true, runF)
	cmd.Use = "commit ID...|-|--all"
	cmd.Short = "Commit prepared messages: PEND → TBDL, delivered from now on"
	cmd.Long = `Commit prepared (PEND) messages once the producer's business transaction has
committed: each becomes TBDL and takes its place in its queue now — on an
EOIO queue its seq is assigned at commit, so order is commit order. A stuck
message (the check-back gave up on it) commits like any other.

` + cmdutil.BulkHelp("message", "queuectl tx list", "--all selects PEND messages only.")
	cmd.Example = `  id=$(queuectl send --qos EO --sender ERP --receiver WMS --prepare < order.xml)
  queuectl tx commit "$id"
  queuectl tx list --sender ERP -o ids | queuectl tx commit -`
	return cmd
}

// NewRollbackCmd builds `tx rollback`.
func NewRollbackCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd := newActCmd(f, false, runF)
	cmd.Use = "rollback ID...|-|--all"
	cmd.Short = "Roll back prepared messages: PEND messages are deleted"
	cmd.Long = `Roll back prepared (PEND) messages whose producer's business transaction
failed: each is deleted, payload and all, and never delivered. The audit log
keeps the rollback with the ids.

` + cmdutil.BulkHelp("message", "queuectl tx list", "--all selects PEND messages only.")
	cmd.Example = `  queuectl tx rollback 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl tx rollback --all --sender ERP --older-than 1d --dry-run
  queuectl tx rollback --all --stuck --sender ERP`
	return cmd
}

func newActCmd(f *cmdutil.Factory, commit bool, runF func(context.Context, *ActOptions) error) *cobra.Command {
	opts := &ActOptions{
		BulkOptions: cmdutil.BulkOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf},
		Now:         f.Now,
		Commit:      commit,
	}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteMessageIDs([]domain.Status{domain.StatusPEND}, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.FilterFlags = cmdutil.ChangedFlags(cmd, filterFlags...)
			opts.Filters.setFrom(cmd)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunAct(cmd.Context(), opts)
		},
	}
	cmdutil.AddBulkFlags(cmd, &opts.BulkOptions, "PEND message", true)
	action := admin.ActRollback
	if commit {
		action = admin.ActCommit
	}
	cmdutil.Audited(cmd, string(action))
	opts.Filters.addFlags(cmd.Flags(), "with --all: ")
	return cmd
}

// RunAct commits or rolls back the messages.
func RunAct(ctx context.Context, opts *ActOptions) error {
	a := &cmdutil.BulkAction{Action: admin.ActRollback, Verb: "roll back", Change: "PEND → deleted", Noun: "message"}
	if opts.Commit {
		a.Action, a.Verb, a.Change = admin.ActCommit, "commit", "PEND → TBDL"
	}
	if opts.All {
		f, err := opts.Filters.filter(opts.Now())
		if err != nil {
			return err
		}
		a.Select = &admin.Selection{Messages: &f}
	}
	return cmdutil.RunBulk(ctx, a, &opts.BulkOptions)
}
