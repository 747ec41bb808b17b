package queue

import (
	"context"
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
}

// NewBlockedCmd builds `queue blocked`.
func NewBlockedCmd(f *cmdutil.Factory, runF func(context.Context, *BlockedOptions) error) *cobra.Command {
	opts := &BlockedOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	return &cobra.Command{
		Use:   "blocked",
		Short: "List blocked queues with the head message that blocks each",
		Long: `List every BLOCKED queue with its blocking head: id, status, error, how long
it has blocked, attempts, crashes, whether it is blacklisted, and how many
messages wait behind it. A status marked * is blacklisted.

A queue is blocked when its head is NDLV: retries exhausted, a crash
blacklisting, or — on EOIO queues — any permanent error. Failing the head
(or resending it once the cause is fixed) lets the queue go on in order.`,
		Example: `  queuectl queue blocked
  queuectl queue blocked -o json | jq -r '.[].head.id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunBlocked(cmd.Context(), opts)
		},
	}
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
	err = svc.Queues(ctx, admin.QueueFilter{States: []domain.QueueState{domain.QueueBlocked}}, func(q *domain.Queue) error {
		behind := max(q.Depth-1, 0)
		q.Behind = &behind
		return l.Add(q)
	})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	if l.Count() == 0 && format.Tabular() {
		opts.Hintf("no queue is blocked")
	}
	return nil
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
		{Header: "BEHIND", Max: 8, Value: func(q *domain.Queue) string { return strconv.FormatInt(*q.Behind, 10) }},
		{Header: "CLASS", Max: 9, Wide: true, Value: head(func(h *domain.QueueHead) string { return output.Dash(string(h.ErrorClass)) })},
		{Header: "ERROR", Max: 60, Value: head(func(h *domain.QueueHead) string { return output.Dash(output.Truncate(h.Error, 60)) })},
	}
}
