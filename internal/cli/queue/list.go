package queue

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// ListOptions are the parsed flags of `queue list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	QoS       []string
	Stages    []string
	States    []string
	Receivers []string
	Name      string
	After     string
	Limit     int
}

// NewListCmd builds `queue list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List queues with their state, depth and per-status counts",
		Long: `List physical queues in name order: qos, stage, state, depth (messages that
still need delivery or an operator), counts per status, the head message's
status, how long the queue has been blocked, and the age of its oldest open
message.

States: ACTIVE (delivering), WAITING (the head waits for a retry), BLOCKED (the
head is NDLV and holds up the queue), STOPPED (stopped by an operator), EMPTY.`,
		Example: `  queuectl queue list
  queuectl queue list --state BLOCKED,WAITING
  queuectl queue list --qos EOIO --name 'XBQ*' -o wide
  queuectl queue list --receiver WMS -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.QoS, "qos", nil, "only these qualities of service: EO, EOIO")
	fl.StringSliceVar(&opts.Stages, "stage", nil, "only these stages: inbound, outbound")
	fl.StringSliceVar(&opts.States, "state", nil, "only these states: ACTIVE, WAITING, BLOCKED, STOPPED, EMPTY")
	fl.StringSliceVar(&opts.Receivers, "receiver", nil, "only outbound queues of these receivers")
	fl.StringVar(&opts.Name, "name", "", "only queues whose name matches this pattern (e.g. 'XBQ*')")
	fl.StringVar(&opts.After, "after", "", "start after this queue name (paging)")
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many queues (0 = all)")
	return cmd
}

// RunList prints the queues.
func RunList(ctx context.Context, opts *ListOptions) error {
	f, err := opts.filter()
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
	l := output.NewList(opts.IO.Out, format, Columns(opts.Now), func(q *domain.Queue) string { return q.Name })
	if err := svc.Queues(ctx, f, l.Add); err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	if l.Count() == 0 && format.Tabular() {
		opts.Hintf("no queues match")
	}
	return nil
}

func (opts *ListOptions) filter() (admin.QueueFilter, error) {
	f := admin.QueueFilter{Receivers: cmdutil.SplitList(opts.Receivers), Name: opts.Name, After: opts.After, Limit: opts.Limit}
	if opts.Limit < 0 {
		return f, domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	for _, s := range cmdutil.SplitList(opts.QoS) {
		q, err := domain.ParseQoS(s)
		if err != nil {
			return f, err
		}
		f.QoS = append(f.QoS, q)
	}
	for _, s := range cmdutil.SplitList(opts.Stages) {
		st, err := domain.ParseStage(s)
		if err != nil {
			return f, err
		}
		f.Stages = append(f.Stages, st)
	}
	for _, s := range cmdutil.SplitList(opts.States) {
		st, err := domain.ParseQueueStates(s)
		if err != nil {
			return f, err
		}
		f.States = append(f.States, st...)
	}
	return f, nil
}
