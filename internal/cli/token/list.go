package token

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/output"
)

// ListOptions are the parsed flags of `token list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Format func() (output.Format, error)
	Config func() (*config.Config, error)
	Hintf  func(format string, args ...any)
}

// Listed is one token of server.tokens as token list shows it: never the
// token, which the server does not keep, nor its hash.
type Listed struct {
	Name    string `json:"name" yaml:"name"`
	Role    string `json:"role" yaml:"role"`
	Created string `json:"created" yaml:"created"`
}

// NewListCmd builds `token list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Format: f.Format, Config: f.Config, Hintf: f.Hintf}
	return &cobra.Command{
		Use:   "list",
		Short: "List the API tokens the config file grants: name, role, created",
		Long: `List the tokens that server.tokens of the config file grants — the file serve
reads (--config, QUEUECTL_CONFIG, or the default): each token's name, role,
and when 'token create' made it ("-" for a line written without created:).
Neither the token, which nobody keeps but its holder, nor its SHA-256 is
shown. -o ids prints the names.`,
		Example: `  queuectl token list
  queuectl --config /etc/queuectl/config.yaml token list -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunList(cmd.Context(), opts)
		},
	}
}

// RunList prints the tokens.
func RunList(_ context.Context, opts *ListOptions) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	cols := []output.Column[Listed]{
		{Header: "NAME", Max: 60, Value: func(t Listed) string { return t.Name }},
		{Header: "ROLE", Max: 8, Value: func(t Listed) string { return t.Role }},
		{Header: "CREATED", Max: 20, Value: func(t Listed) string { return output.Dash(t.Created) }},
	}
	l := output.NewList(opts.IO.Out, format, cols, func(t Listed) string { return t.Name })
	for _, t := range c.Server.Tokens {
		if err := l.Add(Listed{Name: t.Name, Role: t.Role, Created: t.Created}); err != nil {
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	if l.Count() == 0 && format.Tabular() {
		if c.File == "" {
			opts.Hintf("no tokens: there is no config file (--config names one); 'queuectl token create' makes a token and its line")
		} else {
			opts.Hintf("no tokens under server.tokens in %s; 'queuectl token create' makes a token and its line", c.File)
		}
	}
	return nil
}
