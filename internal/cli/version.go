package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/buildinfo"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

func newVersionCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(f.IO.Out, buildinfo.String())
			return err
		},
	}
}

func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print a completion script for your shell. For example:

  bash:        source <(queuectl completion bash)
  zsh:         queuectl completion zsh > "${fpath[1]}/_queuectl"
  fish:        queuectl completion fish > ~/.config/fish/completions/queuectl.fish
  powershell:  queuectl completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			default:
				return root.GenPowerShellCompletionWithDesc(out)
			}
		},
	}
	return cmd
}
