package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/domain"
)

// ExactArgs is cobra.ExactArgs with a usage error that names the arguments.
func ExactArgs(n int, names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		return domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("%s takes %s, got %d argument(s)", cmd.CommandPath(), strings.Join(names, " "), len(args)),
			helpHint(cmd))
	}
}

// NoArgs is cobra.NoArgs with a usage error that says the command takes no
// arguments; cobra's own calls the argument an unknown command.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return domain.WithHint(domain.ErrInvalid,
		fmt.Sprintf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " ")),
		helpHint(cmd))
}

// RunGroup is the run function of a command that only groups subcommands
// (queue, message, ...): called bare it prints its help; called with an
// unknown subcommand it fails with a usage error instead of printing help
// and exiting 0 as cobra does for a group.
func RunGroup(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	hint := helpHint(cmd)
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = fmt.Sprintf("did you mean '%s %s'? %s", cmd.CommandPath(), s[0], hint)
	}
	return domain.WithHint(domain.ErrInvalid,
		fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath()), hint)
}

func helpHint(cmd *cobra.Command) string {
	return "see '" + cmd.CommandPath() + " --help'"
}
