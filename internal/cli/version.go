package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/buildinfo"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

func newVersionCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print the version, the commit it was built from and the build date; -o json
and -o yaml give them as fields (version, commit, date, modified, go_version,
platform), -o ids the version alone.`,
		Args: cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			format, err := f.Format()
			if err != nil {
				return err
			}
			info := buildinfo.Get()
			return output.Value(f.IO.Out, format, info, func(w io.Writer, _ bool) error {
				_, err := fmt.Fprintln(w, info.String())
				return err
			}, func() []string { return []string{info.Version} })
		},
	}
}

// shells are the shells `completion` writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

func validShell(cmd *cobra.Command, args []string) error {
	if slices.Contains(shells, args[0]) {
		return nil
	}
	return domain.WithHint(domain.ErrInvalid,
		fmt.Sprintf("shell %q is not supported; use one of %s", args[0], strings.Join(shells, ", ")),
		"see 'queuectl completion --help'")
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
		ValidArgs: shells,
		Args:      cobra.MatchAll(cmdutil.ExactArgs(1, "SHELL"), validShell),
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
