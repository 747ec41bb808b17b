package message

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// PayloadOptions are the parsed flags of `message payload`.
type PayloadOptions struct {
	IO    *cmdutil.IOStreams
	Admin func() (admin.Service, error)
	ID    string
	// Version is an earlier payload version (--version); 0 is the current one.
	Version int
}

// NewPayloadCmd builds `message payload`.
func NewPayloadCmd(f *cmdutil.Factory, runF func(context.Context, *PayloadOptions) error) *cobra.Command {
	opts := &PayloadOptions{IO: f.IO, Admin: f.Admin}
	cmd := &cobra.Command{
		Use:   "payload ID",
		Short: "Write a message's raw payload to stdout, byte for byte",
		Long: `Write a message's raw payload to stdout, byte for byte. After 'message edit',
--version N writes an earlier version: 1 is the payload the message was sent
with ('message show' names the current version).`,
		Example: `  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f > order.xml
  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f | xmllint --format -
  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f --version 1 > original.xml`,
		Args:              cmdutil.ExactArgs(1, "ID"),
		ValidArgsFunction: completeOneID(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunPayload(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Version, "version", 0, "an earlier payload version, after an edit (1 is the payload sent)")
	return cmd
}

// RunPayload writes the payload.
func RunPayload(ctx context.Context, opts *PayloadOptions) error {
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	if opts.Version < 0 {
		return domain.Invalidf("--version %d must be 1 or more (1 is the payload the message was sent with)", opts.Version)
	}
	p, err := svc.PayloadVersion(ctx, opts.ID, opts.Version)
	if err != nil {
		return err
	}
	_, err = opts.IO.Out.Write(p)
	return err
}
