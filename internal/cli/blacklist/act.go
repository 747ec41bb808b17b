package blacklist

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// ActOptions are the parsed flags of `blacklist release` and `blacklist fail`.
type ActOptions struct {
	cmdutil.BulkOptions
	// Queues and Receivers select the blacklisted messages of --all.
	Queues    []string
	Receivers []string
	Action    admin.Action
}

// NewReleaseCmd builds `blacklist release`.
func NewReleaseCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd := newActCmd(f, admin.ActRelease, runF)
	cmd.Use = "release ID...|-|--all"
	cmd.Short = "Release blacklisted messages: back to TBDL, crashes reset"
	cmd.Long = `Release blacklisted messages once the cause of the crashes is fixed: each
goes back to TBDL with its crashes and attempts reset, and is delivered again.
If it crashes the engine again, it is blacklisted again after
engine.blacklisting.crashes crashes.

` + cmdutil.BulkHelp("message", "queuectl blacklist list", "--all selects blacklisted messages only.")
	cmd.Example = `  queuectl blacklist release 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl blacklist list -o ids | queuectl blacklist release -
  queuectl blacklist release --all --receiver ARCHIVE --dry-run
  queuectl blacklist release --all --yes`
	return cmd
}

// NewFailCmd builds `blacklist fail`.
func NewFailCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd := newActCmd(f, admin.ActBlacklistFail, runF)
	cmd.Use = "fail ID...|-|--all"
	cmd.Short = "Fail blacklisted messages: cancel them for good (FAIL)"
	cmd.Long = `Fail blacklisted messages: they become FAIL, a final status, and are never
delivered — the way to get rid of a poison message. --reason is recorded in
each message's history and in the audit log. A blacklisted head no longer
blocks its queue once failed.

` + cmdutil.BulkHelp("message", "queuectl blacklist list", "--all selects blacklisted messages only.")
	cmd.Example = `  queuectl blacklist fail 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f --reason "poison: malformed archive record"
  queuectl blacklist list --queue XBTOEAB9 -o ids | queuectl blacklist fail -
  queuectl blacklist fail --all --receiver ARCHIVE --yes`
	return cmd
}

func newActCmd(f *cmdutil.Factory, action admin.Action, runF func(context.Context, *ActOptions) error) *cobra.Command {
	opts := &ActOptions{
		BulkOptions: cmdutil.BulkOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf},
		Action:      action,
	}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteMessageIDs([]domain.Status{domain.StatusNDLV}, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.FilterFlags = cmdutil.ChangedFlags(cmd, "queue", "receiver")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunAct(cmd.Context(), opts)
		},
	}
	cmdutil.AddBulkFlags(cmd, &opts.BulkOptions, "blacklisted message", true)
	cmdutil.Audited(cmd, string(action))
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Queues, "queue", nil, "with --all: only messages in these physical queues")
	fl.StringSliceVar(&opts.Receivers, "receiver", nil, "with --all: only messages to these receivers")
	if action == admin.ActBlacklistFail {
		fl.StringVar(&opts.Reason, "reason", "", "why, for the history and the audit log")
	}
	return cmd
}

// RunAct releases or fails the messages.
func RunAct(ctx context.Context, opts *ActOptions) error {
	a := &cmdutil.BulkAction{Action: opts.Action, Noun: "message"}
	switch opts.Action {
	case admin.ActRelease:
		a.Verb, a.Change = "release", "blacklisted NDLV → TBDL, crashes reset"
	case admin.ActBlacklistFail:
		a.Verb, a.Change = "fail", "blacklisted NDLV → FAIL"
	default:
		return domain.Invalidf("%s is not a blacklist action", opts.Action)
	}
	yes := true
	a.Select = &admin.Selection{Messages: &admin.MessageFilter{
		Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes,
		Queues: cmdutil.SplitList(opts.Queues), Receivers: cmdutil.SplitList(opts.Receivers),
	}}
	return cmdutil.RunBulk(ctx, a, &opts.BulkOptions)
}
