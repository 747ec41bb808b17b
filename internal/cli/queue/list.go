package queue

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

	Filters
	After string
	Limit int
	Sort  string
	Watch cmdutil.WatchOptions
}

// Filters are the selection flags of `queue list`, which `queue stop` and
// `queue start` take for --all.
type Filters struct {
	QoS       []string
	Stages    []string
	States    []string
	Receivers []string
	Name      string
}

// filterFlags are the names of the Filters flags.
var filterFlags = []string{"qos", "stage", "state", "receiver", "name"}

// addFlags adds the filter flags to fl, their help texts led by prefix.
func (o *Filters) addFlags(fl *pflag.FlagSet, prefix string) {
	fl.StringSliceVar(&o.QoS, "qos", nil, prefix+"only these qualities of service: EO, EOIO")
	fl.StringSliceVar(&o.Stages, "stage", nil, prefix+"only these stages: inbound, outbound")
	fl.StringSliceVar(&o.States, "state", nil, prefix+"only these states: ACTIVE, WAITING, BLOCKED, ERROR, STOPPED, UNCONFIGURED, EMPTY")
	fl.StringSliceVar(&o.Receivers, "receiver", nil, prefix+"only outbound queues of these receivers")
	fl.StringVar(&o.Name, "name", "", prefix+"only queues whose name matches this pattern (e.g. 'XBQ*')")
}

// filter checks the flags and returns the filter they select.
func (o *Filters) filter() (admin.QueueFilter, error) {
	f := admin.QueueFilter{Receivers: cmdutil.SplitList(o.Receivers), Name: o.Name}
	for _, s := range cmdutil.SplitList(o.QoS) {
		q, err := domain.ParseQoS(s)
		if err != nil {
			return f, err
		}
		f.QoS = append(f.QoS, q)
	}
	for _, s := range cmdutil.SplitList(o.Stages) {
		st, err := domain.ParseStage(s)
		if err != nil {
			return f, err
		}
		f.Stages = append(f.Stages, st)
	}
	for _, s := range cmdutil.SplitList(o.States) {
		st, err := domain.ParseQueueStates(s)
		if err != nil {
			return f, err
		}
		f.States = append(f.States, st...)
	}
	return f, nil
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

States: ACTIVE (messages to deliver), WAITING (the head waits for a retry),
BLOCKED (the head is NDLV and holds up the queue), ERROR (nothing to deliver,
but NDLV messages that block nothing — EO messages after a permanent error or
blacklisting — wait for an operator), STOPPED (stopped by an operator),
UNCONFIGURED (messages to deliver that wait, because no engine delivers to the
queue's receiver: no live node has it configured — or, while none runs, the
config file names receivers but not this one), EMPTY (depth 0; never while
messages are open).

--sort depth lists the deepest queues first, --sort age those whose oldest
open message is oldest; with --limit N, the first N of that order.
--watch lists again every --interval (2s), in place on a terminal.`,
		Example: `  queuectl queue list
  queuectl queue list --state BLOCKED,WAITING
  queuectl queue list --qos EOIO --name 'XBQ*' -o wide
  queuectl queue list --receiver WMS -o json
  queuectl queue list --sort depth --limit 10
  queuectl queue list --state BLOCKED,WAITING --watch`,
		Args: cmdutil.NoArgs,
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
	opts.Filters.addFlags(fl, "")
	fl.StringVar(&opts.After, "after", "", "start after this queue name (paging)")
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many queues (0 = all)")
	fl.StringVar(&opts.Sort, "sort", sortName, "order: name, depth (deepest first) or age (oldest open message first)")
	_ = cmd.RegisterFlagCompletionFunc("sort", cmdutil.CompleteValues(sortName, sortDepth, sortAge))
	cmdutil.AddWatchFlags(cmd, &opts.Watch)
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
	if opts.Sort == sortName || opts.Sort == "" {
		err = svc.Queues(ctx, f, l.Add)
	} else {
		err = sortedQueues(ctx, svc, f, opts.Sort, l.Add)
	}
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	if l.Count() == 0 && format.Tabular() {
		opts.Hintf("%s", noMatch(ctx, svc, f))
	}
	return nil
}

// noMatch says that the filters matched no queue and, for a --name that
// matched none, which pattern would: queue names are uppercase, and --name
// is a shell pattern, so xbq most likely meant 'XBQ*'.
func noMatch(ctx context.Context, svc admin.Service, f admin.QueueFilter) string {
	if f.Name == "" {
		return "no queues match" + cmdutil.UnknownNames(ctx, svc, nil, f.Receivers)
	}
	msg := fmt.Sprintf("no queue matches --name %s", f.Name)
	var tries []string
	try := func(p string) {
		if p != f.Name && !slices.Contains(tries, p) {
			tries = append(tries, p)
		}
	}
	try(strings.ToUpper(f.Name))
	wildcard := strings.ContainsAny(f.Name, "*?[")
	if !wildcard {
		try(f.Name + "*")
		try(strings.ToUpper(f.Name) + "*")
	}
	for _, p := range tries {
		g := f
		g.Name, g.After, g.Limit = p, "", 1
		found := false
		err := svc.Queues(ctx, g, func(*domain.Queue) error {
			found = true
			return admin.ErrStop
		})
		if err != nil || !found {
			continue
		}
		var why []string
		if !strings.HasPrefix(p, f.Name) {
			why = append(why, "queue names are uppercase")
		}
		if !wildcard && strings.HasSuffix(p, "*") {
			why = append(why, "--name is a pattern of whole names, * and ? as in the shell")
		}
		return fmt.Sprintf("%s (did you mean --name '%s'? %s)", msg, p, strings.Join(why, "; "))
	}
	return msg
}

// The orders of --sort.
const (
	sortName  = "name"
	sortDepth = "depth"
	sortAge   = "age"
)

// sortedQueues lists the queues f selects in the order of --sort: the
// deepest first (depth), or the one whose oldest open message is oldest
// first (age), by name among equals; the limit keeps the first of that
// order. The store lists queues by name, so all of them are read and
// ordered here — O(queues), as queue list is anyway.
func sortedQueues(ctx context.Context, svc admin.Service, f admin.QueueFilter, by string, add func(*domain.Queue) error) error {
	limit := f.Limit
	f.Limit = 0
	var qs []*domain.Queue
	if err := svc.Queues(ctx, f, func(q *domain.Queue) error {
		qs = append(qs, q)
		return nil
	}); err != nil {
		return err
	}
	slices.SortStableFunc(qs, func(a, b *domain.Queue) int {
		switch by {
		case sortDepth:
			return cmp.Compare(b.Depth, a.Depth)
		default: // sortAge: a queue without open messages sorts last
			if a.OldestAt == nil || b.OldestAt == nil {
				return cmp.Compare(boolInt(a.OldestAt == nil), boolInt(b.OldestAt == nil))
			}
			return a.OldestAt.Compare(*b.OldestAt)
		}
	})
	if limit > 0 && len(qs) > limit {
		qs = qs[:limit]
	}
	for _, q := range qs {
		if err := add(q); err != nil {
			return err
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (opts *ListOptions) filter() (admin.QueueFilter, error) {
	if opts.Limit < 0 {
		return admin.QueueFilter{}, domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	switch opts.Sort {
	case sortName, "":
	case sortDepth, sortAge:
		if opts.After != "" {
			return admin.QueueFilter{}, cmdutil.FlagError("--after pages through queues by name; it does not go with --sort %s", opts.Sort)
		}
	default:
		return admin.QueueFilter{}, cmdutil.FlagError("--sort %q must be name, depth or age", opts.Sort)
	}
	f, err := opts.Filters.filter()
	f.After, f.Limit = opts.After, opts.Limit
	return f, err
}
