package message

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// PayloadOptions are the parsed flags of `message payload`.
type PayloadOptions struct {
	IO    *cmdutil.IOStreams
	Admin func() (admin.Service, error)
	ID    string
}

// NewPayloadCmd builds `message payload`.
func NewPayloadCmd(f *cmdutil.Factory, runF func(context.Context, *PayloadOptions) error) *cobra.Command {
	opts := &PayloadOptions{IO: f.IO, Admin: f.Admin}
	return &cobra.Command{
		Use:   "payload ID",
		Short: "Write a message's raw payload to stdout, byte for byte",
		Example: `  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f > order.xml
  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f | xmllint --format -`,
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
}

// RunPayload writes the payload.
func RunPayload(ctx context.Context, opts *PayloadOptions) error {
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	p, err := svc.Payload(ctx, opts.ID)
	if err != nil {
		return err
	}
	_, err = opts.IO.Out.Write(p)
	return err
}
