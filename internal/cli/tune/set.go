package tune

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
subparameter or a value out of range is refused (exit 2) and nothing
changes; the refusal is in the audit log.

The new value applies to messages enqueued after it; existing queues drain
as they are.`,
		Example: `  queuectl tune set EO_INBOUND_PARALLEL --sub CENTRAL 8
  queuectl tune set EO_OUTBOUND_PARALLEL 4               # every receiver without its own value
  queuectl tune set EO_OUTBOUND_PARALLEL --sub WMS 16`,
		Args: cmdutil.ExactArgs(2, "PARAM", "VALUE"),
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
(the value for all receivers), and that one back to 1.`,
		Example: `  queuectl tune unset EO_OUTBOUND_PARALLEL --sub WMS
  queuectl tune unset EO_INBOUND_PARALLEL --sub CENTRAL`,
		Args: cmdutil.ExactArgs(1, "PARAM"),
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

// RunSet sets or unsets the value and prints the entry now in force.
func RunSet(ctx context.Context, opts *SetOptions) error {
	value := 0
	if !opts.Unset {
		var err error
		if value, err = parseValue(opts.Value); err != nil {
			return err
		}
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	e, err := svc.Tune(ctx, opts.Param, opts.Sub, value)
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

// parseValue checks VALUE before anything is opened: 0 would mean unset,
// so it is refused with a pointer to `tune unset`.
func parseValue(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, domain.Invalidf("value %q is not a whole number from 1 to 9999; nothing was changed", s)
	}
	if v == 0 {
		return 0, domain.WithHint(domain.ErrInvalid, "value 0 is out of range: values are 1 to 9999; nothing was changed",
			"to go back to the default, use 'queuectl tune unset'")
	}
	return v, nil
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
