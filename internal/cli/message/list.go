package message

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// ListOptions are the parsed flags of `message list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Statuses  []string
	Queues    []string
	Receivers []string
	Senders   []string
	AppQueues []string
	Error     string
	OlderThan string
	NewerThan string
	After     string
	Limit     int
}

// NewListCmd builds `message list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List messages, oldest first, with filters and cursor paging",
		Long: `List messages in creation order (ids are time-ordered UUIDv7). List-valued
filters take comma-separated values and match any of them. A status marked
with * is blacklisted.

Paging: --limit N (default 100; 0 lists all, streamed) and --after ID to go
on after the last id of the previous page. Age filters take a duration back
from now (90s, 15m, 2h, 7d) or an RFC 3339 time.`,
		Example: `  queuectl message list --status NDLV,WAIT
  queuectl message list --queue XBQIORDERS_DE --limit 0 -o jsonl
  queuectl message list --receiver WMS --error timeout --older-than 1h
  queuectl message list --limit 100 --after 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Statuses, "status", nil, "only these statuses: PEND, TBDL, DLNG, WAIT, HOLD, NDLV, DLVD, FAIL")
	fl.StringSliceVar(&opts.Queues, "queue", nil, "only these physical queues")
	fl.StringSliceVar(&opts.Receivers, "receiver", nil, "only messages to these receivers")
	fl.StringSliceVar(&opts.Senders, "sender", nil, "only messages from these senders")
	fl.StringSliceVar(&opts.AppQueues, "app-queue", nil, "only these EOIO application queues")
	fl.StringVar(&opts.Error, "error", "", "only messages whose error contains this text (any case)")
	fl.StringVar(&opts.OlderThan, "older-than", "", "only messages created before this long ago (or this time)")
	fl.StringVar(&opts.NewerThan, "newer-than", "", "only messages created within this long ago (or after this time)")
	fl.StringVar(&opts.After, "after", "", "start after this message id (paging)")
	fl.IntVar(&opts.Limit, "limit", 100, "at most this many messages (0 = all, streamed)")
	return cmd
}

// RunList prints the messages.
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
	l := output.NewList(opts.IO.Out, format, Columns(opts.Now), func(m *domain.Message) string { return m.ID })
	limit := f.Limit
	if limit > 0 && format.Tabular() {
		f.Limit = limit + 1 // one more, to tell whether there is a next page
	}
	var last string
	more := false
	err = svc.Messages(ctx, f, func(m *domain.Message) error {
		if limit > 0 && l.Count() == limit {
			more = true
			return nil
		}
		last = m.ID
		return l.Add(m)
	})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	switch {
	case l.Count() == 0 && format.Tabular():
		opts.Hintf("no messages match")
	case more:
		opts.Hintf("showing the first %d; next page: --after %s (or --limit 0 for all)", limit, last)
	}
	return nil
}

func (opts *ListOptions) filter() (admin.MessageFilter, error) {
	f := admin.MessageFilter{
		Queues: cmdutil.SplitList(opts.Queues), Receivers: cmdutil.SplitList(opts.Receivers),
		Senders: cmdutil.SplitList(opts.Senders), AppQueues: cmdutil.SplitList(opts.AppQueues),
		ErrorText: opts.Error, After: opts.After, Limit: opts.Limit,
	}
	if opts.Limit < 0 {
		return f, domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	for _, s := range cmdutil.SplitList(opts.Statuses) {
		st, err := domain.ParseStatuses(s)
		if err != nil {
			return f, err
		}
		f.Statuses = append(f.Statuses, st...)
	}
	for _, a := range f.AppQueues {
		if err := domain.ValidateAppQueue(a); err != nil {
			return f, err
		}
	}
	if f.After != "" {
		if err := domain.ValidID(f.After); err != nil {
			return f, domain.Invalidf("--after: %v", err)
		}
	}
	var err error
	now := opts.Now()
	if f.OlderThan, err = cmdutil.ParseAge("older-than", opts.OlderThan, now); err != nil {
		return f, err
	}
	if f.NewerThan, err = cmdutil.ParseAge("newer-than", opts.NewerThan, now); err != nil {
		return f, err
	}
	return f, nil
}
