package tx

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

// ListOptions are the parsed flags of `tx list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Filters
	After string
	Limit int
}

// NewListCmd builds `tx list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List prepared (PEND) messages with their check-back: checks, last answer, stuck",
		Long: `List the messages of transactional sends that are prepared (PEND) and wait
for their producer's commit or rollback, oldest first, with how the engine's
check-back with their producer went: CHECKS (how often the producer was
asked), LAST CHECK (how long ago), LAST ANSWER (commit, rollback or
unknown, or why there was none: timeout, HTTP 500, unreachable, invalid
answer, no check_url) and STUCK (the engine gave up asking after
tx.max_checks checks: the message stays PEND until an operator commits or
rolls it back).

--stuck lists only the stuck messages, --stuck=false only the others.
-o json, jsonl and yaml give each message with checks, last_check_at,
last_answer and stuck. 'queuectl message show ID' shows every check in the
message's history.`,
		Example: `  queuectl tx list
  queuectl tx list --stuck
  queuectl tx list --sender ERP --older-than 10m
  queuectl tx list --stuck -o ids | queuectl tx rollback -`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Filters.setFrom(cmd)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.Filters.addFlags(fl, "")
	fl.StringVar(&opts.After, "after", "", "start after this message id (paging)")
	fl.IntVar(&opts.Limit, "limit", 100, "at most this many messages (0 = all, streamed)")
	return cmd
}

// RunList prints the PEND messages.
func RunList(ctx context.Context, opts *ListOptions) error {
	if opts.Limit < 0 {
		return domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	if opts.After != "" {
		if err := domain.ValidID(opts.After); err != nil {
			return domain.Invalidf("--after: %v", err)
		}
	}
	f, err := opts.Filters.filter(opts.Now())
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
	f.After = opts.After
	empty := "no prepared (PEND) messages"
	switch {
	case f.Stuck != nil && *f.Stuck:
		empty = "no stuck prepared (PEND) messages"
	case f.Stuck != nil:
		empty += " that are not stuck"
	}
	return cmdutil.PrintPage(opts.IO.Out, format, opts.Hintf, cmdutil.Page[Entry]{
		Columns: columns(opts.Now),
		Cursor:  func(e Entry) string { return e.ID },
		Limit:   opts.Limit,
		Walk: func(limit int, add func(Entry) error) error {
			f.Limit = limit
			return svc.Messages(ctx, f, func(m *domain.Message) error { return add(Entry{Message: m}) })
		},
		Empty: empty,
	})
}

func columns(now func() time.Time) []output.Column[Entry] {
	return []output.Column[Entry]{
		{Header: "ID", Max: 36, Value: func(e Entry) string { return e.ID }},
		{Header: "QUEUE", Max: domain.MaxQueueName, Value: func(e Entry) string { return e.Queue }},
		{Header: "SENDER", Max: 20, Value: func(e Entry) string { return e.Sender }},
		{Header: "INTERFACE", Max: 30, Value: func(e Entry) string { return output.Dash(e.Interface) }},
		{Header: "AGE", Max: 5, Value: func(e Entry) string { return output.Age(&e.CreatedAt, now()) }},
		{Header: "QOS", Max: 4, Wide: true, Value: func(e Entry) string { return string(e.QoS) }},
		{Header: "APP QUEUE", Max: domain.MaxAppQueue, Wide: true, Value: func(e Entry) string { return output.Dash(e.AppQueue) }},
		{Header: "CHECKS", Max: 6, Value: func(e Entry) string { return strconv.Itoa(e.Checks) }},
		{Header: "LAST CHECK", Max: 10, Value: func(e Entry) string { return output.Age(e.LastCheckAt, now()) }},
		{Header: "LAST CHECK AT", Max: 20, Wide: true, Value: func(e Entry) string { return output.Time(e.LastCheckAt) }},
		{Header: "LAST ANSWER", Max: 20, Value: func(e Entry) string { return output.Dash(e.LastAnswer) }},
		{Header: "STUCK", Max: 5, Value: func(e Entry) string {
			if e.Stuck {
				return "yes"
			}
			return "no"
		}},
	}
}
