// Package config implements `queuectl config`: show the effective configuration.
package config

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl config` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(newViewCmd(f))
	return cmd
}

func newViewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "view",
		Short: "Print the effective configuration (flags > env > file > defaults), secrets redacted",
		Long: `Print the configuration this invocation runs with: defaults, overridden by
the config file, by QUEUECTL_* environment variables, and by flags. Tokens and
passwords are shown as REDACTED. The output is YAML that can serve as a config
file; -o json prints it as JSON.`,
		Example: `  queuectl config view
  QUEUECTL_ENGINE_WORKERS=32 queuectl config view
  queuectl --config ./prod.yaml config view -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := f.Config()
			if err != nil {
				return err
			}
			format, err := f.Format()
			if err != nil {
				return err
			}
			if format == output.IDs {
				return domain.Invalidf("config view has no ids to print; use -o yaml (the default) or -o json")
			}
			r := c.Redacted()
			doc, err := document(r)
			if err != nil {
				return err
			}
			return output.Value(f.IO.Out, format, doc, func(w io.Writer, _ bool) error {
				src := "none found; defaults, environment and flags only"
				if c.File != "" {
					src = c.File
				}
				fmt.Fprintf(w, "# config file: %s\n", src)
				return yaml.NewEncoder(w).Encode(r)
			}, nil)
		},
	}
}

// document returns the configuration as the generic value its YAML form
// holds, so that -o json shows the keys of the config file (engine.max_payload,
// not Engine.MaxPayload) and its values (10MiB and 5m0s, not nanoseconds).
func document(c *config.Config) (any, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}
