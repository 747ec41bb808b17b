package queue

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// BlockedOptions are the parsed flags of `queue blocked`.
type BlockedOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)
	Watch  cmdutil.WatchOptions
}

// NewBlockedCmd builds `queue blocked`.
func NewBlockedCmd(f *cmdutil.Factory, runF func(context.Context, *BlockedOptions) error) *cobra.Command {
	opts := &BlockedOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "blocked",
		Short: "List blocked queues with the head message that blocks each",
		Long: `List every BLOCKED queue with its blocking head: id, status, error, how long
it has blocked, attempts, crashes, whether it is blacklisted, and how many
messages wait behind it. A status marked * is blacklisted.

A queue is blocked when its head is NDLV and holds the rest up: retries
exhausted, or — on EOIO queues — a permanent error or a crash blacklisting.
BEHIND counts the messages it holds up. Failing the head (or resending it once
the cause is fixed) lets the queue go on in order.

An EO message NDLV by a permanent error or blacklisting blocks nothing: later
messages go on without it. A queue left with only such messages is in state
ERROR; 'queuectl queue list --state ERROR' lists those.`,
		Example: `  queuectl queue blocked
  queuectl queue blocked -o json | jq -r '.[].head.id'
  queuectl queue blocked -w --interval 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.Watch(cmd.Context(), opts.Watch, cmd.CommandPath(), func(ctx context.Context, out io.Writer, hintf func(string, ...any)) error {
				o := *opts
				streams := *o.IO
				o.IO, o.Hintf, streams.Out = &streams, hintf, out
				if runF != nil {
					return runF(ctx, &o)
				}
				return RunBlocked(ctx, &o)
			})
		},
	}
	cmdutil.AddWatchFlags(cmd, &opts.Watch)
	return cmd
}

// RunBlocked prints the blocked queues.
func RunBlocked(ctx context.Context, opts *BlockedOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	l := output.NewList(opts.IO.Out, format, blockedColumns(opts.Now), func(q *domain.Queue) string { return q.Name })
	err = svc.Queues(ctx, admin.QueueFilter{States: []domain.QueueState{domain.QueueBlocked}}, l.Add)
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	if !format.Tabular() {
		return nil
	}
	if l.Count() == 0 {
		opts.Hintf("no queue is blocked")
	}
	// Messages that block nothing still wait for an operator: say where.
	errored := 0
	err = svc.Queues(ctx, admin.QueueFilter{States: []domain.QueueState{domain.QueueError}}, func(*domain.Queue) error {
		errored++
		return nil
	})
	if err == nil && errored > 0 {
		opts.Hintf("%s in state ERROR (NDLV messages that block nothing): queuectl queue list --state ERROR",
			plural(errored, "queue is", "queues are"))
	}
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return cmdutil.FormatCount(n) + " " + many
}

func blockedColumns(now func() time.Time) []output.Column[*domain.Queue] {
	head := func(f func(h *domain.QueueHead) string) func(*domain.Queue) string {
		return func(q *domain.Queue) string {
			if q.Head == nil {
				return "-"
			}
			return f(q.Head)
		}
	}
	return []output.Column[*domain.Queue]{
		{Header: "QUEUE", Max: domain.MaxQueueName, Value: func(q *domain.Queue) string { return q.Name }},
		{Header: "QOS", Max: 4, Value: func(q *domain.Queue) string { return string(q.QoS) }},
		{Header: "STAGE", Max: 8, Wide: true, Value: func(q *domain.Queue) string { return string(q.Stage) }},
		{Header: "HEAD", Max: 36, Value: head(func(h *domain.QueueHead) string { return h.ID })},
		{Header: "STATUS", Max: 5, Value: head(func(h *domain.QueueHead) string {
			if h.Blacklisted {
				return string(h.Status) + "*"
			}
			return string(h.Status)
		})},
		{Header: "SINCE", Max: 5, Value: func(q *domain.Queue) string { return output.Age(q.BlockedSince, now()) }},
		{Header: "ATTEMPTS", Max: 3, Value: head(func(h *domain.QueueHead) string { return strconv.Itoa(h.Attempts) })},
		{Header: "CRASHES", Max: 3, Value: head(func(h *domain.QueueHead) string { return strconv.Itoa(h.Crashes) })},
		{Header: "BEHIND", Max: 8, Value: func(q *domain.Queue) string { return behind(q) }},
		{Header: "CLASS", Max: 9, Wide: true, Value: head(func(h *domain.QueueHead) string { return output.Dash(string(h.ErrorClass)) })},
		{Header: "ERROR", Max: 60, Clip: 60, Value: head(func(h *domain.QueueHead) string { return output.Dash(h.Error) })},
	}
}

// behind is the BEHIND cell: the messages the head holds up.
func behind(q *domain.Queue) string {
	if q.Behind == nil {
		return "-"
	}
	return strconv.FormatInt(*q.Behind, 10)
}
