package token

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/output"
)

// tokenBytes is how much randomness a token carries: 256 bits.
const tokenBytes = 32

// CreateOptions are the parsed flags of `token create`.
type CreateOptions struct {
	IO     *cmdutil.IOStreams
	Format func() (output.Format, error)
	Config func() (*config.Config, error)
	// Rand is the source of the token; crypto/rand's by default.
	Rand io.Reader
	// Now is when the token is made, for its created: time.
	Now func() time.Time

	Name string
	Role string
	// File, when set, is where the token is written instead of stdout.
	File string
}

// Created is a new token with the config line that grants it; -o json
// prints it as is.
type Created struct {
	Name string `json:"name" yaml:"name"`
	Role string `json:"role" yaml:"role"`
	// Token is left out when it went to File.
	Token      string `json:"token,omitempty" yaml:"token,omitempty"`
	File       string `json:"file,omitempty" yaml:"file,omitempty"`
	SHA256     string `json:"sha256" yaml:"sha256"`
	Created    string `json:"created" yaml:"created"`
	ConfigLine string `json:"config_line" yaml:"config_line"`
}

// NewCreateCmd builds `token create`.
func NewCreateCmd(f *cmdutil.Factory, runF func(context.Context, *CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Format: f.Format, Config: f.Config, Rand: rand.Reader, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "create NAME --role ROLE",
		Short: "Print a new API token and the config line that grants it",
		Long: `Print a new random API token (256 bits, base64url) to stdout, and to stderr
the line that grants it, for server.tokens in the server's config file:

  - {name: NAME, role: ROLE, sha256: "...", created: "..."}

The server keeps only the token's SHA-256, so the token itself is shown only
now: keep it in a file that only its user can read, and pass it with
--token-file or a context's token_file. --file PATH writes it there, a new
file of mode 0600, creating the directories it lacks (mode 0700), and
refuses a file that exists. serve reads server.tokens when it starts; restart
it after adding the line. -o json prints {name, role, token, sha256,
created, config_line} to stdout instead (file in place of token with
--file). 'queuectl token list' lists the tokens server.tokens grants.

NAME is what history and audit entries record as the actor: 1-60 characters
of A-Z a-z 0-9 _ - . ROLE is one of:

  monitor   read metadata: queues, messages, audit, tuning; no payloads
  operator  monitor + payloads, resend, fail, release, stop, start, tx commit/rollback
  admin     operator + tune, purge, eoio switch
  producer  send, tx commit/rollback`,
		Example: `  queuectl token create ops --role operator --file ~/.config/queuectl/prod.token
  queuectl token create grafana --role monitor -o json`,
		Args: cmdutil.ExactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunCreate(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", "", "what the token may do: "+strings.Join(config.TokenRoles, ", "))
	cmd.Flags().StringVar(&opts.File, "file", "", "write the token to this new file (mode 0600, directories 0700) instead of stdout")
	_ = cmd.RegisterFlagCompletionFunc("role", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return config.TokenRoles, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// RunCreate checks the name and role, draws a token and prints it.
func RunCreate(_ context.Context, opts *CreateOptions) error {
	if opts.Role == "" {
		return cmdutil.FlagError("--role is required: one of %s", strings.Join(config.TokenRoles, ", "))
	}
	if err := config.ValidateTokenRole(opts.Role); err != nil {
		return domain.WithHint(domain.ErrInvalid, err.Error(), "see 'queuectl token create --help' for what each role may do")
	}
	if err := config.ValidateTokenName(opts.Name); err != nil {
		return err
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	if format == output.IDs {
		return domain.Invalidf("token create has no ids to print; use -o table (the default: the token alone) or -o json")
	}
	c, err := opts.Config()
	if err != nil {
		return err
	}
	raw := make([]byte, tokenBytes)
	if _, err := io.ReadFull(opts.Rand, raw); err != nil {
		return fmt.Errorf("drawing a random token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	sum := httpapi.HashToken(tok)
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	at := now().UTC().Truncate(time.Second).Format(time.RFC3339)
	created := &Created{
		Name: opts.Name, Role: opts.Role, Token: tok, SHA256: sum, Created: at,
		ConfigLine: fmt.Sprintf("- {name: %s, role: %s, sha256: %q, created: %q}", opts.Name, opts.Role, sum, at),
	}
	if opts.File != "" {
		path := cmdutil.ExpandHome(opts.File)
		if err := writeTokenFile(path, tok); err != nil {
			return err
		}
		created.Token, created.File = "", path
	}
	for _, t := range c.Server.Tokens {
		if t.Name == opts.Name && !c.Quiet {
			fmt.Fprintf(opts.IO.ErrOut, "queuectl: server.tokens in %s already has a token named %s: replace its line with the new one\n",
				c.File, opts.Name)
		}
	}
	return output.Value(opts.IO.Out, format, created, func(w io.Writer, _ bool) error {
		// The token is the data; the line that grants it goes to stderr, so
		// that stdout can be redirected into a token file as it is.
		if !c.Quiet {
			if created.File != "" {
				fmt.Fprintf(opts.IO.ErrOut, "queuectl: wrote the token to %s\n", created.File)
			}
			fmt.Fprintln(opts.IO.ErrOut, "queuectl: add this line under server.tokens in the server's config file and restart serve; the token is shown only now:")
		}
		fmt.Fprintln(opts.IO.ErrOut, created.ConfigLine)
		if created.File != "" {
			return nil
		}
		_, err := fmt.Fprintln(w, created.Token)
		return err
	}, nil)
}

// writeTokenFile writes tok to a new file only its user can read, creating
// the directories it lacks for that user alone: a fresh home has no
// ~/.config/queuectl yet. A file that exists is left alone — it may hold
// the token a server grants now.
func writeTokenFile(path, tok string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return domain.Invalidf("--file %s: %v", path, unwrapPath(err))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return domain.WithHint(domain.ErrInvalid, fmt.Sprintf("--file %s exists; a new token does not overwrite one", path),
			"move the old file aside, or name another")
	}
	if err != nil {
		return domain.Invalidf("--file %s: %v", path, unwrapPath(err))
	}
	if _, err := fmt.Fprintln(f, tok); err != nil {
		f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
