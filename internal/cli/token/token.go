// Package token implements `queuectl token`: API tokens for the server's
// TCP listener (§6).
package token

import (
	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

// NewCmd builds `queuectl token` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create and list API tokens for 'queuectl serve --listen'",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(NewCreateCmd(f, nil), NewListCmd(f, nil))
	return cmd
}
