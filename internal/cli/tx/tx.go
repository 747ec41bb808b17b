// Package tx implements `queuectl tx`: the prepared (PEND) messages of
// transactional sends (§9), and committing or rolling them back.
package tx

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl tx` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Transactional sends: list, commit and roll back prepared (PEND) messages",
		Long: `A producer that must send a message if and only if its own business
transaction commits sends it with 'queuectl send --prepare': the message is
stored as PEND and not delivered. When the business transaction has
committed, 'tx commit ID' makes it TBDL (EOIO: its seq is assigned then, so
order is commit order); when it failed, 'tx rollback ID' deletes it (the
audit log keeps the rollback).`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewCommitCmd(f, nil), NewRollbackCmd(f, nil))
	return cmd
}

// Entry is a tx entry (§5): a PEND message, how often its producer was asked
// about it and whether it is stuck. The check-back is not built yet, so
// Checks is 0 and Stuck false.
type Entry struct {
	*domain.Message `yaml:",inline"`
	Checks          int  `json:"checks" yaml:"checks"`
	Stuck           bool `json:"stuck" yaml:"stuck"`
}

// Filters are the selection flags of `tx list`, which `tx commit` and
// `tx rollback` take for --all.
type Filters struct {
	Queues    []string
	Senders   []string
	OlderThan string
}

// filterFlags are the names of the Filters flags.
var filterFlags = []string{"queue", "sender", "older-than"}

func (o *Filters) addFlags(fl *pflag.FlagSet, prefix string) {
	fl.StringSliceVar(&o.Queues, "queue", nil, prefix+"only these physical queues")
	fl.StringSliceVar(&o.Senders, "sender", nil, prefix+"only messages from these senders")
	fl.StringVar(&o.OlderThan, "older-than", "", prefix+"only messages prepared before this long ago (or this time)")
}

// filter returns the PEND messages the flags select.
func (o *Filters) filter(now time.Time) (admin.MessageFilter, error) {
	f := admin.MessageFilter{
		Statuses: []domain.Status{domain.StatusPEND},
		Queues:   cmdutil.SplitList(o.Queues), Senders: cmdutil.SplitList(o.Senders),
	}
	var err error
	f.OlderThan, err = cmdutil.ParseAge("older-than", o.OlderThan, now)
	return f, err
}

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
		Short: "List prepared (PEND) messages: id, queue, sender, interface, age",
		Long: `List the messages of transactional sends that are prepared (PEND) and wait
for their producer's commit or rollback, oldest first.

-o json gives each message with two more fields: checks (how often the
producer was asked about it) and stuck (asked tx.max_checks times without
an answer). queuectl does not ask producers yet — the check-back of §9 is
still to come — so checks is 0 and stuck is false for now: a PEND message
stays until it is committed or rolled back.`,
		Example: `  queuectl tx list
  queuectl tx list --sender ERP --older-than 10m
  queuectl tx list --older-than 1h -o ids | queuectl tx rollback -`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	return cmdutil.PrintPage(opts.IO.Out, format, opts.Hintf, cmdutil.Page[Entry]{
		Columns: columns(opts.Now),
		Cursor:  func(e Entry) string { return e.ID },
		Limit:   opts.Limit,
		Walk: func(limit int, add func(Entry) error) error {
			f.Limit = limit
			return svc.Messages(ctx, f, func(m *domain.Message) error { return add(Entry{Message: m}) })
		},
		Empty: "no prepared (PEND) messages",
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
		{Header: "CHECKS", Max: 4, Wide: true, Value: func(e Entry) string { return strconv.Itoa(e.Checks) }},
		{Header: "STUCK", Max: 3, Wide: true, Value: func(e Entry) string {
			if e.Stuck {
				return "yes"
			}
			return "no"
		}},
	}
}
