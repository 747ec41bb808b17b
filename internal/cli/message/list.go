package message

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

// ListOptions are the parsed flags of `message list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Filters
	After   string
	Limit   int
	Reverse bool
}

// Filters are the selection flags of `message list`, which the bulk
// message commands take for --all.
type Filters struct {
	Statuses  []string
	Queues    []string
	Receivers []string
	Senders   []string
	AppQueues []string
	Error     string
	OlderThan string
	NewerThan string
	// Key is the idempotency key whose messages are selected; KeyGiven
	// tells an empty --key "" from none.
	Key      string
	KeyGiven bool
	// Blacklisted is --blacklisted: "true", "false", or "" for either.
	Blacklisted string
}

// filterFlags are the names of the Filters flags.
var filterFlags = []string{"status", "queue", "receiver", "sender", "app-queue", "error", "older-than", "newer-than", "key", "blacklisted"}

// addFlags adds the filter flags to fl, their help texts led by prefix.
func (o *Filters) addFlags(fl *pflag.FlagSet, prefix string) {
	fl.StringSliceVar(&o.Statuses, "status", nil, prefix+"only these statuses: PEND, TBDL, DLNG, WAIT, HOLD, NDLV, DLVD, FAIL")
	fl.StringSliceVar(&o.Queues, "queue", nil, prefix+"only these physical queues")
	fl.StringSliceVar(&o.Receivers, "receiver", nil, prefix+"only messages to these receivers")
	fl.StringSliceVar(&o.Senders, "sender", nil, prefix+"only messages from these senders")
	fl.StringSliceVar(&o.AppQueues, "app-queue", nil, prefix+"only these EOIO application queues")
	fl.StringVar(&o.Error, "error", "", prefix+"only messages whose error contains this text (any case)")
	fl.StringVar(&o.OlderThan, "older-than", "", prefix+"only messages created before this long ago (or this time)")
	fl.StringVar(&o.NewerThan, "newer-than", "", prefix+"only messages created within this long ago (or after this time)")
	fl.StringVar(&o.Key, "key", "", prefix+"only messages sent with this idempotency key (by any sender)")
	fl.StringVar(&o.Blacklisted, "blacklisted", "", prefix+"true: only blacklisted messages; false: only those that are not")
}

// filter checks the flags and returns the filter they select.
func (o *Filters) filter(now time.Time) (admin.MessageFilter, error) {
	f := admin.MessageFilter{
		Queues: cmdutil.SplitList(o.Queues), Receivers: cmdutil.SplitList(o.Receivers),
		Senders: cmdutil.SplitList(o.Senders), AppQueues: cmdutil.SplitList(o.AppQueues),
		ErrorText: o.Error, Key: o.Key,
	}
	if o.KeyGiven && o.Key == "" {
		return f, domain.Invalidf("--key is empty; a key is 1-%d printable characters", domain.MaxKey)
	}
	if err := domain.ValidateKey(o.Key); err != nil {
		return f, err
	}
	if o.Blacklisted != "" {
		b, err := strconv.ParseBool(o.Blacklisted)
		if err != nil {
			return f, domain.Invalidf("--blacklisted %q must be true or false", o.Blacklisted)
		}
		f.Blacklisted = &b
	}
	for _, s := range cmdutil.SplitList(o.Statuses) {
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
	var err error
	if f.OlderThan, err = cmdutil.ParseAge("older-than", o.OlderThan, now); err != nil {
		return f, err
	}
	if f.NewerThan, err = cmdutil.ParseAge("newer-than", o.NewerThan, now); err != nil {
		return f, err
	}
	return f, nil
}

// NewListCmd builds `message list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List messages, oldest first, with filters and cursor paging",
		Long: `List messages in creation order (ids are time-ordered UUIDv7), or newest
first with --reverse. List-valued filters take comma-separated values and
match any of them. A status marked with * is blacklisted. The table shows
the start of each error; -o wide shows it whole.

Paging: --limit N (default 100; 0 lists all, streamed) and --after ID to go
on after the last id of the previous page (in the list's order: with
--reverse, the older ones). Age filters take a duration back from now (90s,
15m, 2h, 7d) or an RFC 3339 time.`,
		Example: `  queuectl message list --status NDLV,WAIT
  queuectl message list --queue XBQIORDERS_DE --limit 0 -o jsonl
  queuectl message list --receiver WMS --error timeout --older-than 1h
  queuectl message list --key order-4711 --sender ERP
  queuectl message list --status NDLV --blacklisted false
  queuectl message list --limit 100 --after 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl message list --reverse --limit 10 -o wide`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.KeyGiven = cmd.Flags().Changed("key")
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
	fl.BoolVar(&opts.Reverse, "reverse", false, "newest first")
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
	return cmdutil.PrintPage(opts.IO.Out, format, opts.Hintf, cmdutil.Page[*domain.Message]{
		Columns: Columns(opts.Now),
		Cursor:  func(m *domain.Message) string { return m.ID },
		Limit:   f.Limit,
		Walk: func(limit int, add func(*domain.Message) error) error {
			f.Limit = limit
			return svc.Messages(ctx, f, add)
		},
		Empty: "no messages match",
		Why:   func() string { return cmdutil.UnknownNames(ctx, svc, f.Queues, f.Receivers) },
	})
}

func (opts *ListOptions) filter() (admin.MessageFilter, error) {
	if opts.Limit < 0 {
		return admin.MessageFilter{}, domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	if opts.After != "" {
		if err := domain.ValidID(opts.After); err != nil {
			return admin.MessageFilter{}, domain.Invalidf("--after: %v", err)
		}
	}
	f, err := opts.Filters.filter(opts.Now())
	f.After, f.Limit, f.NewestFirst = opts.After, opts.Limit, opts.Reverse
	return f, err
}
