package eoio

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// SwitchOptions are the parsed flags of `eoio switch`.
type SwitchOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)

	// Queues is --queues as typed; the service checks it, so that a
	// refusal is audited as in remote mode.
	Queues    string
	queuesSet bool
}

// NewSwitchCmd builds `eoio switch`.
func NewSwitchCmd(f *cmdutil.Factory, runF func(context.Context, *SwitchOptions) error) *cobra.Command {
	opts := &SwitchOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "switch --queues N",
		Short: "Switch EOIO to N queues per stage (1-99), or back to one queue per app queue (0)",
		Long: fmt.Sprintf(`Switch EOIO to a new set of queues with the other prefix (XBQ <-> XB2): with
--queues N from 1 to %d the app queues are hashed into N queues per stage;
with --queues 0 every app queue gets a queue of its own again. Messages
sent from now on go to the new set; those already queued drain from the
old set first, app queue by app queue, so that order is kept.

Admins only (over the API). A switch is refused (exit 4) while the old set
of the last switch still holds messages — 'queuectl eoio status' shows
them — and when EOIO uses that many queues already. A number out of range
is refused (exit 2). Every switch and every refusal is in the audit log.`, domain.MaxEOIOQueues),
		Example: switchExample,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.queuesSet = cmd.Flags().Changed("queues")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunSwitch(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Queues, "queues", "", fmt.Sprintf("queues per stage: 1-%d, or 0 for one queue per app queue", domain.MaxEOIOQueues))
	// 0 to MaxEOIOQueues, without a store: 0 first, as the way back.
	counts := []string{"0\tone queue per app queue"}
	for n := 1; n <= domain.MaxEOIOQueues; n++ {
		counts = append(counts, strconv.Itoa(n))
	}
	_ = cmd.RegisterFlagCompletionFunc("queues", cmdutil.CompleteValues(counts...))
	cmdutil.Audited(cmd, "eoio.switch")
	cmdutil.CreatesStore(cmd) // like a first tuning value
	return cmd
}

// RunSwitch switches and prints the state after.
func RunSwitch(ctx context.Context, opts *SwitchOptions) error {
	if !opts.queuesSet {
		return domain.WithHint(domain.ErrInvalid, "eoio switch needs --queues N",
			fmt.Sprintf("N from 1 to %d shares that many queues per stage among the app queues; 0 gives each its own", domain.MaxEOIOQueues))
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	st, err := svc.EOIOSwitch(ctx, admin.EOIOSwitchParams{Queues: opts.Queues})
	if err != nil {
		return err
	}
	err = output.Value(opts.IO.Out, format, st, func(w io.Writer, _ bool) error {
		if _, err := fmt.Fprintf(w, "switched EOIO to %s\n", st.Current); err != nil {
			return err
		}
		return output.Fields(w, fields(st))
	}, func() []string { return st.Draining.Names })
	if err == nil && format.Tabular() {
		hints(opts.Hintf, st)
	}
	return err
}
