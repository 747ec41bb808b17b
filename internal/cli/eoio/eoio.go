// Package eoio implements `queuectl eoio`: EOIO over-serialization and the
// switch procedure (§10).
package eoio

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl eoio` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eoio",
		Short: "EOIO over-serialization: how many queues app queues share, and the switch procedure",
		Long: `EOIO messages are delivered in order per app queue. By default every app
queue has a queue of its own per stage (XBQI<app queue>, XBQO<code4><app
queue>). With tens of thousands of app queues that is too many queues:
'eoio switch --queues N' hashes the app queues into N queues per stage
(1-99), named <prefix>I EOIO NN inbound and <prefix>O<code4>EOIO NN
outbound, where NN is the CRC-32 of the app queue modulo N.

Every switch creates a new set of queues with the other prefix (XBQ <-> XB2);
'--queues 0' switches back to one queue per app queue the same way. New
messages go to the new set, while the old set drains: a queue of the new
set does not start an app queue's messages while that app queue still has
messages in the old set, so order is kept across the switch. The next
switch waits until the old set has drained.

In queues that app queues share, an error does not block the queue: the
failing message and every later message of its app queue move to the app
queue's error queue, XBQE<app queue> (inbound) or XBQF<code4><app queue>
(outbound), which is blocked in order as an EOIO queue is (HOLD behind a
WAIT or NDLV head), while the shared queue goes on. Messages of that app
queue that arrive meanwhile join the error queue. Resend or fail its head
('queuectl queue blocked' lists it) and the app queue goes on in order.`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RunGroup,
	}
	cmd.AddCommand(NewStatusCmd(f, nil), NewSwitchCmd(f, nil))
	return cmd
}

// StatusOptions are the parsed flags of `eoio status`.
type StatusOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)
}

// NewStatusCmd builds `eoio status`.
func NewStatusCmd(f *cmdutil.Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf}
	return &cobra.Command{
		Use:   "status",
		Short: "Show the switch state (inactive, started, active) and the old queues still draining",
		Long: `Show the EOIO switch state:

  inactive  one queue per app queue, nothing left to drain
  started   a switch was made and queues of the old set still hold messages
  active    app queues share N queues per stage, nothing left to drain

with the set in force, the set before the last switch, the old set's queues
that still hold messages (the first 20 of them; -o json counts them all),
and the error queues that hold messages. -o ids prints the names of the
draining queues.`,
		Example: `  queuectl eoio status
  queuectl eoio status -o json | jq .state`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunStatus(cmd.Context(), opts)
		},
	}
}

// RunStatus prints the switch state.
func RunStatus(ctx context.Context, opts *StatusOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	st, err := svc.EOIOStatus(ctx)
	if err != nil {
		return err
	}
	if err := printStatus(opts.IO.Out, format, st); err != nil {
		return err
	}
	if format.Tabular() {
		hints(opts.Hintf, st)
	}
	return nil
}

// printStatus writes a status in the format asked for.
func printStatus(w io.Writer, format output.Format, st *admin.EOIOStatus) error {
	return output.Value(w, format, st, func(w io.Writer, _ bool) error {
		return output.Fields(w, fields(st))
	}, func() []string { return st.Draining.Names })
}

// fields are the lines of a status for a terminal.
func fields(st *admin.EOIOStatus) [][2]string {
	current := st.Current.String()
	if st.SwitchedAt != nil {
		current += fmt.Sprintf(" (since %s, by %s)", output.Time(st.SwitchedAt), st.SwitchedBy)
	}
	old := "-"
	if st.Old != nil {
		old = st.Old.String()
	}
	return [][2]string{
		{"State", st.State},
		{"Queues", current},
		{"Old set", old},
		{"Draining", groupLine(st.Draining)},
		{"Error queues", groupLine(st.ErrorQueues)},
	}
}

// groupLine says how many queues hold how many messages, and names them.
func groupLine(g admin.QueueGroup) string {
	if g.Queues == 0 {
		return "none"
	}
	s := fmt.Sprintf("%s, %s: %s", plural(int64(g.Queues), "queue"), plural(g.Messages, "message"), strings.Join(g.Names, ", "))
	if g.Queues > len(g.Names) {
		s += fmt.Sprintf(", … (%d more)", g.Queues-len(g.Names))
	}
	return s
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return cmdutil.FormatCount(int(n)) + " " + what + "s"
}

// hints tell a terminal user what the state means for them.
func hints(hintf func(string, ...any), st *admin.EOIOStatus) {
	if st.State == admin.EOIOStarted {
		hintf("new messages go to the %s queues; an app queue's messages there start once it has none left in the old %s queues",
			st.Current.Prefix, st.Old.Prefix)
	}
	if st.ErrorQueues.Queues > 0 {
		hintf("an error queue holds an app queue's messages behind a failed one: 'queuectl queue blocked' shows its head; resend or fail it")
	}
}

// switchExample shows the commands of a switch and a switch back.
const switchExample = `  queuectl eoio switch --queues 8     # hash app queues into 8 queues per stage
  queuectl eoio status                # started until the old queues have drained
  queuectl eoio switch --queues 0     # back to one queue per app queue`
