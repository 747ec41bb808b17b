package queue

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// StopOptions are the parsed flags of `queue stop` and `queue start`.
type StopOptions struct {
	cmdutil.BulkOptions
	// Filters select the queues of --all.
	Filters
	// Stop is true for `queue stop`, false for `queue start`.
	Stop bool
}

// NewStopCmd builds `queue stop`.
func NewStopCmd(f *cmdutil.Factory, runF func(context.Context, *StopOptions) error) *cobra.Command {
	cmd := newStopCmd(f, true, runF)
	cmd.Use = "stop NAME...|-|--all"
	cmd.Short = "Stop delivery of queues; they keep accepting messages"
	cmd.Long = `Stop delivery of queues: a STOPPED queue keeps accepting messages but
delivers none until it is started again. A message being delivered when the
queue stops finishes its delivery. Use it to hold traffic back from a
receiver under maintenance.

` + cmdutil.BulkHelp("queue", "queuectl queue list", "--all leaves out queues already STOPPED.")
	cmd.Example = `  queuectl queue stop XBTO2107 XBQO2107ORDERS_DE
  queuectl queue stop --all --receiver WMS --yes
  queuectl queue list --name 'XBQO*' -o ids | queuectl queue stop -`
	return cmd
}

// NewStartCmd builds `queue start`.
func NewStartCmd(f *cmdutil.Factory, runF func(context.Context, *StopOptions) error) *cobra.Command {
	cmd := newStopCmd(f, false, runF)
	cmd.Use = "start NAME...|-|--all"
	cmd.Short = "Start delivery of stopped queues again"
	cmd.Long = `Start delivery of STOPPED queues again: their messages are delivered in seq
order from where they stopped.

` + cmdutil.BulkHelp("queue", "queuectl queue list", "--all selects STOPPED queues only.")
	cmd.Example = `  queuectl queue start XBTO2107
  queuectl queue start --all --receiver WMS --yes
  queuectl queue list --state STOPPED -o ids | queuectl queue start -`
	return cmd
}

func newStopCmd(f *cmdutil.Factory, stop bool, runF func(context.Context, *StopOptions) error) *cobra.Command {
	opts := &StopOptions{
		BulkOptions: cmdutil.BulkOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf},
		Stop:        stop,
	}
	action := admin.ActStart
	if stop {
		action = admin.ActStop
	}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteQueues(action),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.FilterFlags = cmdutil.ChangedFlags(cmd, filterFlags...)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunStop(cmd.Context(), opts)
		},
	}
	cmdutil.AddBulkFlags(cmd, &opts.BulkOptions, "queue", true)
	cmdutil.Audited(cmd, string(action))
	opts.Filters.addFlags(cmd.Flags(), "with --all: ")
	return cmd
}

// RunStop stops or starts the queues.
func RunStop(ctx context.Context, opts *StopOptions) error {
	a := &cmdutil.BulkAction{Action: admin.ActStart, Verb: "start", Change: "STOPPED → delivering", Noun: "queue"}
	if opts.Stop {
		a.Action, a.Verb, a.Change = admin.ActStop, "stop", "delivering → STOPPED"
	}
	if opts.All {
		f, err := opts.Filters.filter()
		if err != nil {
			return err
		}
		a.Select = &admin.Selection{Queues: &f}
	}
	return cmdutil.RunBulk(ctx, a, &opts.BulkOptions)
}
