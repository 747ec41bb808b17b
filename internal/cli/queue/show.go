package queue

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// ShowOptions are the parsed flags of `queue show`.
type ShowOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Now    func() time.Time
	Hintf  func(format string, args ...any)

	Name  string
	All   bool
	Limit int
}

// queueDetail is what `queue show -o json` and `-o yaml` print: the queue
// and its messages, in one flat object in both formats.
type queueDetail struct {
	*domain.Queue `yaml:",inline"`
	Messages      []*domain.Message `json:"messages" yaml:"messages"`
}

// NewShowCmd builds `queue show`.
func NewShowCmd(f *cmdutil.Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Now: f.Now, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one queue: its summary, then its messages in seq order, head first",
		Long: `Show one queue's summary, then its open messages (everything but PEND, DLVD
and FAIL) in seq order, head first. --all includes delivered and failed
messages too, from the oldest.`,
		Example: `  queuectl queue show XBQIORDERS_DE
  queuectl queue show XBTI0000 --limit 10 -o wide
  queuectl queue show XBQIORDERS_DE -o ids | head -1`,
		Args: cmdutil.ExactArgs(1, "NAME"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return f.CompleteNames(admin.NameQueue)(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunShow(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "include delivered and failed messages")
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "at most this many messages (0 = all)")
	return cmd
}

// RunShow prints the queue.
func RunShow(ctx context.Context, opts *ShowOptions) error {
	if opts.Limit < 0 {
		return domain.Invalidf("--limit %d must be 0 (all) or more", opts.Limit)
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	q, err := svc.Queue(ctx, opts.Name)
	if err != nil {
		return err
	}
	p := admin.QueueMessagesParams{All: opts.All, Limit: opts.Limit}
	switch format {
	case output.IDs, output.JSONL:
		// Stream the messages themselves: ids for pipes, objects for jq.
		l := output.NewList(opts.IO.Out, format, nil, func(m *domain.Message) string { return m.ID })
		if err := svc.QueueMessages(ctx, opts.Name, p, l.Add); err != nil {
			return err
		}
		return l.Close()
	case output.JSON, output.YAML:
		d := queueDetail{Queue: q, Messages: []*domain.Message{}}
		err := svc.QueueMessages(ctx, opts.Name, p, func(m *domain.Message) error {
			d.Messages = append(d.Messages, m)
			return nil
		})
		if err != nil {
			return err
		}
		return output.Value(opts.IO.Out, format, d, nil, nil)
	}
	if err := printSummary(opts.IO.Out, q, opts.Now()); err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out)
	l := output.NewList(opts.IO.Out, format, message.Columns(opts.Now), func(m *domain.Message) string { return m.ID })
	if opts.Limit > 0 {
		p.Limit = opts.Limit + 1 // one more, to tell whether the list was cut
	}
	more := false
	err = svc.QueueMessages(ctx, opts.Name, p, func(m *domain.Message) error {
		if l.Count() == opts.Limit && opts.Limit > 0 {
			more = true
			return nil
		}
		return l.Add(m)
	})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	if l.Count() == 0 {
		fmt.Fprintln(opts.IO.Out, noMessages(q, opts.All))
	}
	if more {
		opts.Hintf("showing the first %d messages; --limit 0 shows all", opts.Limit)
	}
	return nil
}

// noMessages explains an empty message list, naming the prepared messages
// that queue show never lists because they have no place in the queue yet.
func noMessages(q *domain.Queue, all bool) string {
	s := "(no open messages"
	if all {
		s = "(no messages"
	}
	if n := q.Counts[domain.StatusPEND]; n > 0 {
		s += fmt.Sprintf("; %d prepared (PEND) until committed: queuectl message list --queue %s --status PEND", n, q.Name)
	}
	if !all {
		s += "; --all shows delivered and failed ones"
	}
	return s + ")"
}

func printSummary(w io.Writer, q *domain.Queue, now time.Time) error {
	head := "-"
	if q.Head != nil {
		head = fmt.Sprintf("%s %s (since %s)", q.Head.ID, q.Head.Status, output.Age(&q.Head.Since, now))
		if q.Head.Error != "" {
			head += ": " + q.Head.Error
		}
	}
	var counts []string
	for _, s := range domain.Statuses {
		if n := q.Counts[s]; n > 0 {
			counts = append(counts, string(s)+" "+strconv.FormatInt(n, 10))
		}
	}
	state := string(q.State)
	if q.BlockedSince != nil {
		state += " for " + output.Age(q.BlockedSince, now)
	}
	pairs := [][2]string{
		{"Queue", q.Name},
		{"QoS", string(q.QoS)},
		{"Stage", string(q.Stage)},
	}
	if q.Receiver != "" {
		pairs = append(pairs, [2]string{"Receiver", q.Receiver})
	}
	pairs = append(pairs,
		[2]string{"State", state},
		[2]string{"Depth", strconv.FormatInt(q.Depth, 10)},
		[2]string{"Counts", output.Dash(strings.Join(counts, ", "))},
		[2]string{"Head", head},
		[2]string{"Oldest", output.Age(q.OldestAt, now)},
		[2]string{"Owner", output.Dash(q.Owner)},
	)
	return output.Fields(w, pairs)
}
