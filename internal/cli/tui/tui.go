// Package tui implements `queuectl tui`: the interactive monitor of §12.
package tui

import (
	"context"
	"path/filepath"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui"
)

// Options are the parsed flags of `queuectl tui`.
type Options struct {
	IO       *cmdutil.IOStreams
	Admin    func() (admin.Service, error)
	Config   func() (*config.Config, error)
	Now      func() time.Time
	Refresh  time.Duration
	ReadOnly bool
}

// NewCmd builds `queuectl tui`.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Admin: f.Admin, Config: f.Config, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Watch and operate queues in an interactive terminal UI",
		Long: `Open the interactive monitor: Queues, Blocked, Blacklist, the Messages of a
queue, a Message's detail, Tuning, Nodes and Audit, refreshed live.

Keys: tab or 1-6 switch views, enter drills in, esc goes back, / filters,
o sorts by the next column, space marks a row, ctrl+a marks all shown,
r resends (releases in Blacklist), f fails, s stops or starts a queue,
e edits and u unsets a tuning value, p pauses the refresh, ? lists every
key, q quits. Every action asks first, saying what changes and how many
messages.

It works on the embedded store or, with --server or a context, against a
server; the first line names which, and the token's role. It offers the
actions the role may run: a monitor token gets a read-only TUI. A server
that cannot be reached exits 6, a token it refuses exits 7.
--timeout bounds each request, not the session.`,
		Example: `  queuectl tui
  queuectl tui --refresh 5s --read-only
  queuectl --server https://mq.example.com:8443 --token-file ~/.mq-token tui`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Refresh < 0 {
				return domain.Invalidf("--refresh %s is negative; give an interval like 2s, or 0 to refresh only on ctrl+r", opts.Refresh)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Refresh, "refresh", 2*time.Second, "refresh the view this often; 0 refreshes only on ctrl+r")
	cmd.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "hide and refuse every action")
	return cmd
}

// Run opens the service and runs the TUI until the operator quits.
func Run(ctx context.Context, opts *Options) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	if !opts.IO.StdinTTY || !opts.IO.StdoutTTY {
		return domain.Invalidf("queuectl tui needs a terminal; for scripts use the list commands, e.g. queuectl queue list -o json")
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	t := tui.Options{
		Service: svc, Refresh: opts.Refresh, ReadOnly: opts.ReadOnly, NoColor: c.NoColor, Now: opts.Now,
		Out: opts.IO.Out, Timeout: c.Timeout, Node: nodeLabel(c, svc), Target: target(c, svc),
	}
	// --timeout bounds each request, not the session, whose end is q or a signal.
	return tui.Run(context.WithoutCancel(ctx), t, tea.WithInput(opts.IO.In), tea.WithOutput(opts.IO.Out))
}

// target names what the TUI acts on, for its header: the server or the
// store, and the context that chose it.
func target(c *config.Config, svc admin.Service) string {
	where := "server " + serverOf(c)
	if _, ok := svc.(*remote.Client); !ok {
		where = "store " + storeOf(c)
	}
	if name, _ := cmdutil.ContextTarget(c); name != "" {
		return "context " + name + " · " + where
	}
	return where
}

// nodeLabel names the node the TUI talks to: this process, or the server.
func nodeLabel(c *config.Config, svc admin.Service) string {
	if _, ok := svc.(*remote.Client); !ok {
		return "embedded: the store " + storeOf(c) + " (or, while another process holds it, that process)"
	}
	return "server " + serverOf(c)
}

// storeOf names the store of embedded mode: the file, or the database
// with its password hidden.
func storeOf(c *config.Config) string {
	loc, err := cmdutil.ResolveStore(c)
	switch {
	case err != nil:
		return "?"
	case loc.Postgres != "":
		return config.RedactURL(loc.Postgres)
	}
	if abs, err := filepath.Abs(loc.Path); err == nil {
		return abs
	}
	return loc.Path
}

// serverOf names the server of remote mode: --server, or the context's.
func serverOf(c *config.Config) string {
	server := c.ServerURL
	if name := c.Context; server == "" && name != "" {
		server = c.Contexts[name].Server
	}
	if server == "" && c.CurrentContext != "" {
		server = c.Contexts[c.CurrentContext].Server
	}
	return server
}
