package message

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// ActOptions are the parsed flags of `message resend` and `message fail`.
type ActOptions struct {
	cmdutil.BulkOptions
	Now func() time.Time
	// Filters select the messages of --all.
	Filters
	Action admin.Action
	// IncludeBlacklisted is resend's --include-blacklisted.
	IncludeBlacklisted bool
}

// bulkActions are the message actions: what each does, and the statuses
// --all selects for it.
var bulkActions = map[admin.Action]struct {
	verb, change string
	statuses     []domain.Status
}{
	admin.ActResend: {"resend", "NDLV/WAIT → TBDL", []domain.Status{domain.StatusNDLV, domain.StatusWAIT}},
	admin.ActFail:   {"fail", "NDLV/WAIT/HOLD → FAIL", []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}},
}

// NewResendCmd builds `message resend`.
func NewResendCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd, opts := newActCmd(f, admin.ActResend, runF)
	cmd.Use = "resend ID...|-|--all"
	cmd.Short = "Resend NDLV or WAIT messages now: back to TBDL with all retries"
	cmd.Long = `Resend messages that are NDLV (not delivered) or WAIT (waiting for a retry):
each goes back to TBDL with its attempts reset and is delivered again at
once. Resending the head of a blocked queue unblocks it: on an EOIO queue
its HOLD successors follow it, in order.

Blacklisted messages are left alone: they crashed the engine, and
'queuectl blacklist release' is their verb. --all does not select them (it
says how many it left alone, in --dry-run and before it asks), and an id of
one is skipped. --include-blacklisted resends them too, releasing them:
their crashes are reset to 0, and the result and the question name them
apart.

` + cmdutil.BulkHelp("message", "queuectl message list", "With --all, --status defaults to NDLV,WAIT.")
	cmd.Example = `  queuectl message resend 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl message list --status NDLV --receiver WMS -o ids | queuectl message resend -
  queuectl message resend --all --receiver WMS --error timeout --dry-run
  queuectl message resend --all --status WAIT --queue XBTO2107 --yes
  queuectl message resend --all --include-blacklisted --dry-run`
	cmd.Flags().BoolVar(&opts.IncludeBlacklisted, "include-blacklisted", false,
		"resend blacklisted messages too, releasing them (their crashes reset to 0)")
	return cmd
}

// NewFailCmd builds `message fail`.
func NewFailCmd(f *cmdutil.Factory, runF func(context.Context, *ActOptions) error) *cobra.Command {
	cmd, _ := newActCmd(f, admin.ActFail, runF)
	cmd.Use = "fail ID...|-|--all"
	cmd.Short = "Fail NDLV, WAIT or HOLD messages: cancel them for good (FAIL)"
	cmd.Long = `Fail messages that are NDLV, WAIT or HOLD: they become FAIL, a final status,
and are never delivered. --reason is recorded in each message's history and
in the audit log. Failing the head of a blocked queue unblocks it: on an
EOIO queue its HOLD successors become TBDL and are delivered in order.

` + cmdutil.BulkHelp("message", "queuectl message list", "With --all, --status defaults to NDLV,WAIT,HOLD.") + `

One action fails what it names before the queues go on: 'message fail
--all --queue Q' fails a blocked queue's head and every message held behind
it. Ids from stdin are applied a chunk at a time, each chunk an action of its
own: a head failed in one chunk releases its HOLD messages before the next.`
	cmd.Example = `  queuectl message fail 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f --reason "invoice booked by hand"
  queuectl queue blocked -o json | jq -r '.[].head.id' | queuectl message fail - --reason "cleanup"
  queuectl message fail --all --status NDLV --receiver SHIPPING --older-than 7d --yes`
	return cmd
}

func newActCmd(f *cmdutil.Factory, action admin.Action, runF func(context.Context, *ActOptions) error) (*cobra.Command, *ActOptions) {
	opts := &ActOptions{
		BulkOptions: cmdutil.BulkOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf},
		Now:         f.Now,
		Action:      action,
	}
	from := []domain.Status{domain.StatusNDLV, domain.StatusWAIT}
	if action == admin.ActFail {
		from = append(from, domain.StatusHOLD)
	}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteMessageIDs(from, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.FilterFlags = cmdutil.ChangedFlags(cmd, filterFlags...)
			opts.KeyGiven = cmd.Flags().Changed("key")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunAct(cmd.Context(), opts)
		},
	}
	cmdutil.AddBulkFlags(cmd, &opts.BulkOptions, "message", true)
	cmdutil.Audited(cmd, string(action))
	opts.Filters.addFlags(cmd.Flags(), "with --all: ")
	if action == admin.ActFail {
		cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, for the history and the audit log")
	}
	return cmd, opts
}

// RunAct resends or fails the messages.
func RunAct(ctx context.Context, opts *ActOptions) error {
	spec, ok := bulkActions[opts.Action]
	if !ok {
		return domain.Invalidf("%s is not a message action", opts.Action)
	}
	a := &cmdutil.BulkAction{Action: opts.Action, Verb: spec.verb, Change: spec.change, Noun: "message",
		IncludeBlacklisted: opts.IncludeBlacklisted}
	if opts.All {
		f, err := opts.Filters.filter(opts.Now())
		if err != nil {
			return err
		}
		if f.Statuses, err = cmdutil.ActionStatuses(f.Statuses, spec.statuses, spec.verb); err != nil {
			return err
		}
		a.Select = &admin.Selection{Messages: &f}
		if opts.Action == admin.ActResend {
			if err := selectApart(a, f, opts.IncludeBlacklisted); err != nil {
				return err
			}
		}
	}
	return cmdutil.RunBulk(ctx, a, &opts.BulkOptions)
}

// selectApart sets what resend --all selects of blacklisted messages:
// without --include-blacklisted none, which it counts apart (a filter that
// asks for them is refused); with it, those of the selection, named apart.
func selectApart(a *cmdutil.BulkAction, f admin.MessageFilter, include bool) error {
	if b := f.Blacklisted; b != nil && *b && !include {
		return domain.WithHint(domain.ErrInvalid,
			"--blacklisted true selects blacklisted messages, which resend leaves alone; nothing was changed",
			"release them with 'queuectl blacklist release --all', or add --include-blacklisted")
	}
	if b := f.Blacklisted; b != nil && !*b {
		return nil // none of them selected: nothing to name apart
	}
	yes, no := true, false
	bl := f
	bl.Blacklisted = &yes
	a.Blacklisted = &admin.Selection{Messages: &bl}
	if !include {
		sel := f
		sel.Blacklisted = &no
		a.Select = &admin.Selection{Messages: &sel}
	}
	return nil
}
