package queue

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// DeleteOptions are the parsed flags of `queue delete`.
type DeleteOptions struct {
	cmdutil.BulkOptions
	// Filters select the queues of --all.
	Filters
}

// NewDeleteCmd builds `queue delete`.
func NewDeleteCmd(f *cmdutil.Factory, runF func(context.Context, *DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{BulkOptions: cmdutil.BulkOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf}}
	cmd := &cobra.Command{
		Use:   "delete NAME...|-|--all",
		Short: "Remove empty physical queues",
		Long: `Remove empty physical queues: queues that hold no message at all, in any
status (DLVD and FAIL included — purge removes those). A queue that holds
messages is skipped, saying how many and of which statuses. A queue that a
new message needs is created again by that message, as on its first use.

Retention removes, when it runs (serve, purge), the empty queues that the
tuning parameters in force would not create again — those of an
EO_INBOUND_PARALLEL or EO_OUTBOUND_PARALLEL value since lowered or unset.
Use delete for the others, such as EOIO queues of app queues no longer used.

` + cmdutil.BulkHelp("queue", "queuectl queue list", "--all selects empty queues only."),
		Example: `  queuectl queue delete XBTO21070042
  queuectl queue delete --all --state EMPTY --name 'XBTO2107*' --dry-run
  queuectl queue list --state EMPTY -o ids | queuectl queue delete -`,
		ValidArgsFunction: f.CompleteQueues(admin.ActDeleteQueue),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			opts.FilterFlags = cmdutil.ChangedFlags(cmd, filterFlags...)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunDelete(cmd.Context(), opts)
		},
	}
	cmdutil.AddBulkFlags(cmd, &opts.BulkOptions, "queue", true)
	cmdutil.Audited(cmd, string(admin.ActDeleteQueue))
	opts.Filters.addFlags(cmd.Flags(), "with --all: ")
	return cmd
}

// RunDelete deletes the queues.
func RunDelete(ctx context.Context, opts *DeleteOptions) error {
	a := &cmdutil.BulkAction{Action: admin.ActDeleteQueue, Verb: "delete", Change: "empty → removed", Noun: "queue",
		Suggest: suggestQueue}
	if opts.All {
		f, err := opts.Filters.filter()
		if err != nil {
			return err
		}
		a.Select = &admin.Selection{Queues: &f}
	}
	return cmdutil.RunBulk(ctx, a, &opts.BulkOptions)
}

// suggestQueue names the queue a name not found most likely meant, by
// the rule every lookup of a queue name follows (queue show): the service's
// not-found error, when it has a suggestion.
func suggestQueue(ctx context.Context, svc admin.Service, missing string) string {
	_, err := svc.Queue(ctx, missing)
	if errors.Is(err, domain.ErrNotFound) && strings.Contains(err.Error(), "did you mean") {
		return err.Error()
	}
	return ""
}
