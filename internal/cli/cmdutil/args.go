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
			"see '"+cmd.CommandPath()+" --help'")
	}
}
