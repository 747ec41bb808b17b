// Package blacklist implements `queuectl blacklist`: the messages that crash
// blacklisting took out of delivery (§4).
package blacklist

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

// NewCmd builds `queuectl blacklist` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blacklist",
		Short: "Messages blacklisted after they crashed the engine",
		Long: `A message whose delivery killed the engine process engine.blacklisting.crashes
times (default 2) is set NDLV and blacklisted, so that it cannot take down
another process. It blocks its queue like any NDLV head. Release it once
the cause is fixed, or fail it.`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewReleaseCmd(f, nil), NewFailCmd(f, nil))
	return cmd
}

// ListOptions are the parsed flags of `blacklist list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Queues    []string
	Receivers []string
	After     string
	Limit     int
	Watch     cmdutil.WatchOptions
}

// NewListCmd builds `blacklist list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List blacklisted messages: id, queue, receiver, crashes, last crash, node, age",
		Example: `  queuectl blacklist list
  queuectl blacklist list --receiver ARCHIVE -o ids
  queuectl blacklist list --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.Watch(cmd.Context(), opts.Watch, cmd.CommandPath(), func(ctx context.Context, out io.Writer, hintf func(string, ...any)) error {
				o := *opts
				streams := *o.IO
				o.IO, o.Hintf, streams.Out = &streams, hintf, out
				if runF != nil {
					return runF(ctx, &o)
				}
				return RunList(ctx, &o)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Queues, "queue", nil, "only these physical queues")
	fl.StringSliceVar(&opts.Receivers, "receiver", nil, "only messages to these receivers")
	fl.StringVar(&opts.After, "after", "", "start after this message id (paging)")
	fl.IntVar(&opts.Limit, "limit", 100, "at most this many messages (0 = all, streamed)")
	cmdutil.AddWatchFlags(cmd, &opts.Watch)
	return cmd
}

// RunList prints the blacklisted messages.
func RunList(ctx context.Context, opts *ListOptions) error {
	if opts.Limit < 0 {
		return domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	if opts.After != "" {
		if err := domain.ValidID(opts.After); err != nil {
			return domain.Invalidf("--after: %v", err)
		}
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	yes := true
	f := admin.MessageFilter{
		Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes,
		Queues: cmdutil.SplitList(opts.Queues), Receivers: cmdutil.SplitList(opts.Receivers),
		After: opts.After,
	}
	return cmdutil.PrintPage(opts.IO.Out, format, opts.Hintf, cmdutil.Page[*domain.Message]{
		Columns: columns(opts.Now),
		Cursor:  func(m *domain.Message) string { return m.ID },
		Limit:   opts.Limit,
		Walk: func(limit int, add func(*domain.Message) error) error {
			f.Limit = limit
			return svc.Messages(ctx, f, add)
		},
		Empty: "no message is blacklisted",
	})
}

func columns(now func() time.Time) []output.Column[*domain.Message] {
	return []output.Column[*domain.Message]{
		{Header: "ID", Max: 36, Value: func(m *domain.Message) string { return m.ID }},
		{Header: "QUEUE", Max: domain.MaxQueueName, Value: func(m *domain.Message) string { return m.Queue }},
		{Header: "RECEIVER", Max: 20, Value: func(m *domain.Message) string { return output.Dash(m.Receiver) }},
		{Header: "CRASHES", Max: 3, Value: func(m *domain.Message) string { return strconv.Itoa(m.Crashes) }},
		{Header: "LAST CRASH", Max: 20, Value: func(m *domain.Message) string { return output.Time(&m.UpdatedAt) }},
		{Header: "NODE", Max: 30, Value: func(m *domain.Message) string { return output.Dash(m.Node) }},
		{Header: "AGE", Max: 5, Value: func(m *domain.Message) string { return output.Age(&m.CreatedAt, now()) }},
		{Header: "SENDER", Max: 20, Wide: true, Value: func(m *domain.Message) string { return m.Sender }},
		{Header: "INTERFACE", Max: 30, Wide: true, Value: func(m *domain.Message) string { return output.Dash(m.Interface) }},
	}
}
