package tune

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/output"
)

// SetOptions are the parsed flags of `tune set` and `tune unset`.
type SetOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)

	Param string
	Sub   string
	// Value is the argument of `tune set`; empty for `tune unset`.
	Value string
	Unset bool
}

// NewSetCmd builds `tune set`.
func NewSetCmd(f *cmdutil.Factory, runF func(context.Context, *SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "set PARAM [--sub SUB] VALUE",
		Short: "Set a tuning value (1-9999) for messages enqueued from now on",
		Long: `Set a tuning value: how many parallel EO queues messages are spread over.
VALUE is a whole number from 1 to 9999. An unknown parameter, a wrong
subparameter (a role; a receiver configured under receivers:, or one with a
value already) or a value out of range is refused (exit 2) and nothing
changes; the refusal is in the audit log.

The new value applies to messages enqueued after it; existing queues drain
as they are.`,
		Example: `  queuectl tune set EO_INBOUND_PARALLEL --sub CENTRAL 8
  queuectl tune set EO_OUTBOUND_PARALLEL 4               # every receiver without its own value
  queuectl tune set EO_OUTBOUND_PARALLEL --sub WMS 16`,
		Args:              cmdutil.ExactArgs(2, "PARAM", "VALUE"),
		ValidArgsFunction: completeParam(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Param, opts.Value = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunSet(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Sub, "sub", "", "subparameter: the role (inbound) or a receiver name (outbound)")
	cmdutil.Audited(cmd, "tune.set")
	cmdutil.CreatesStore(cmd)
	return cmd
}

// NewUnsetCmd builds `tune unset`.
func NewUnsetCmd(f *cmdutil.Factory, runF func(context.Context, *SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf, Unset: true}
	cmd := &cobra.Command{
		Use:   "unset PARAM [--sub SUB]",
		Short: "Remove a tuning value: back to the default",
		Long: `Remove a tuning value. An inbound value goes back to the default, 1; a
receiver's outbound value goes back to EO_OUTBOUND_PARALLEL without --sub
(the value for all receivers), and that one back to 1. Unsetting a value that
is not set changes nothing and exits 3, naming the values that are set.`,
		Example: `  queuectl tune unset EO_OUTBOUND_PARALLEL --sub WMS
  queuectl tune unset EO_INBOUND_PARALLEL --sub CENTRAL`,
		Args:              cmdutil.ExactArgs(1, "PARAM"),
		ValidArgsFunction: completeParam(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Param = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunSet(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Sub, "sub", "", "subparameter: the role (inbound) or a receiver name (outbound)")
	cmdutil.Audited(cmd, "tune.unset")
	cmdutil.CreatesStore(cmd)
	return cmd
}

// RunSet sets or unsets the value and prints the entry now in force. The
// service checks the value, so that a refusal is audited as in remote mode.
func RunSet(ctx context.Context, opts *SetOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	// Printed as the service names it: eo_outbound_parallel is EO_OUTBOUND_PARALLEL.
	tp := admin.TuneParams{Param: opts.Param, Sub: opts.Sub, Value: opts.Value, Unset: opts.Unset}.Canonical()
	o := *opts
	o.Param, o.Sub, opts = tp.Param, tp.Sub, &o
	e, err := svc.Tune(ctx, tp)
	if err != nil {
		return err
	}
	err = output.Value(opts.IO.Out, format, e, func(w io.Writer, _ bool) error {
		return printChange(w, opts, e)
	}, func() []string { return []string{entryID(*e)} })
	if err == nil && format.Tabular() {
		opts.Hintf("the change applies to messages enqueued from now on; existing queues drain as they are")
	}
	return err
}

func printChange(w io.Writer, opts *SetOptions, e *admin.TuningEntry) error {
	name := opts.Param
	if opts.Sub != "" {
		name += " --sub " + opts.Sub
	}
	var err error
	switch {
	case !opts.Unset:
		_, err = fmt.Fprintf(w, "%s = %d\n", name, e.Value)
	case e.Sub != opts.Sub:
		_, err = fmt.Fprintf(w, "%s unset; %s now follows %s for all receivers = %d\n", name, opts.Sub, e.Param, e.Value)
	default:
		_, err = fmt.Fprintf(w, "%s unset; back to the default = %d\n", name, e.Value)
	}
	return err
}

// completeParam completes the first argument, a tuning parameter.
func completeParam(f *cmdutil.Factory) cmdutil.CompleteFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f.CompleteNames(admin.NameParam)(cmd, args, toComplete)
	}
}
