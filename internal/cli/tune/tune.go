// Package tune implements `queuectl tune`: the parallelism of EO traffic
// (§7), kept in the store so that it applies cluster-wide without a restart.
package tune

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl tune` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Show and change how widely EO traffic is spread over parallel queues",
		Long: `EO messages are spread over parallel queues for throughput:

  EO_INBOUND_PARALLEL  --sub SENDER|CENTRAL|RECEIVER  inbound queues XBT<L>0000 ...
                       (the subparameter of the node's engine.role applies)
  EO_OUTBOUND_PARALLEL [--sub RECEIVER]               outbound queues XBTO<code4>0000 ...
                       (without --sub: every receiver without a value of its own)

Values are 1 to 9999; the default is 1 (one queue). A change applies to
messages enqueued after it; existing queues drain as they are.`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewSetCmd(f, nil), NewUnsetCmd(f, nil))
	return cmd
}

// ListOptions are the parsed flags of `tune list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
}

// NewListCmd builds `tune list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format}
	return &cobra.Command{
		Use:   "list",
		Short: "List the tuning values and the queues that exist for each",
		Long: `List every tuning value: the inbound one per role, the outbound default for
all receivers (SUB -), and each receiver's own. VALUE is the value in force;
SET says whether it was set or is the default (1). QUEUES are the EO queues
that exist for the value now — more than VALUE while queues made under an
older value drain. The table shortens long queue lists; -o wide and -o json
show them all.`,
		Example: `  queuectl tune list
  queuectl tune list -o json | jq '.[] | select(.param == "EO_OUTBOUND_PARALLEL")'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
}

// RunList prints the tuning values.
func RunList(ctx context.Context, opts *ListOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	entries, err := svc.Tuning(ctx)
	if err != nil {
		return err
	}
	l := output.NewList(opts.IO.Out, format, columns, entryID)
	for _, e := range entries {
		if err := l.Add(e); err != nil {
			return err
		}
	}
	return l.Close()
}

// entryID is what -o ids prints for an entry: PARAM or PARAM/SUB.
func entryID(e admin.TuningEntry) string {
	if e.Sub == "" {
		return e.Param
	}
	return e.Param + "/" + e.Sub
}

// queuesShown is how many characters of queue names a table cell shows.
const queuesShown = 60

var columns = []output.Column[admin.TuningEntry]{
	{Header: "PARAM", Max: 20, Value: func(e admin.TuningEntry) string { return e.Param }},
	{Header: "SUB", Max: 60, Value: func(e admin.TuningEntry) string { return output.Dash(e.Sub) }},
	{Header: "VALUE", Max: 4, Value: func(e admin.TuningEntry) string { return strconv.Itoa(e.Value) }},
	{Header: "SET", Max: 7, Value: func(e admin.TuningEntry) string {
		if e.Set {
			return "yes"
		}
		return "default"
	}},
	{Header: "QUEUES", Max: queuesShown + 12, Value: func(e admin.TuningEntry) string { return queueCell(e.Queues, queuesShown) }},
	{Header: "ALL QUEUES", Wide: true, Value: func(e admin.TuningEntry) string { return output.Dash(strings.Join(e.Queues, ",")) }},
}

// queueCell lists queue names up to about width characters and says how
// many more there are.
func queueCell(queues []string, width int) string {
	if len(queues) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, q := range queues {
		if i > 0 && b.Len()+1+len(q) > width {
			fmt.Fprintf(&b, ",… (%d in all)", len(queues))
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(q)
	}
	return b.String()
}
