// Package cli is queuectl's command line: the root command, the global
// flags, and the mapping from errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/buildinfo"
	"github.com/queuectl/queuectl/internal/cli/audit"
	"github.com/queuectl/queuectl/internal/cli/bench"
	"github.com/queuectl/queuectl/internal/cli/blacklist"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	configcmd "github.com/queuectl/queuectl/internal/cli/config"
	"github.com/queuectl/queuectl/internal/cli/demo"
	"github.com/queuectl/queuectl/internal/cli/eoio"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/cli/migrate"
	"github.com/queuectl/queuectl/internal/cli/node"
	"github.com/queuectl/queuectl/internal/cli/purge"
	"github.com/queuectl/queuectl/internal/cli/queue"
	"github.com/queuectl/queuectl/internal/cli/send"
	"github.com/queuectl/queuectl/internal/cli/serve"
	"github.com/queuectl/queuectl/internal/cli/token"
	tuicmd "github.com/queuectl/queuectl/internal/cli/tui"
	"github.com/queuectl/queuectl/internal/cli/tune"
	"github.com/queuectl/queuectl/internal/cli/tx"
	"github.com/queuectl/queuectl/internal/domain"
)

// Main runs queuectl with the process's arguments and streams and returns
// the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := cmdutil.New(cmdutil.System())
	return Run(ctx, f, os.Args[1:])
}

// Run executes one command line against f and returns the exit code, having
// printed any error to f.IO.ErrOut.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root := newRootFor(f, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		err = classifyCobraError(err)
		auditRefusal(ctx, f, cmd, err)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		PrintError(f.IO.ErrOut, err)
	}
	return ExitCode(err)
}

// auditRefusal records a usage error (exit 2) of a command whose refusals
// are audited — a send, an operator or admin action — when the command
// refused it before the service saw it (§6); an action given nothing to act
// on was no action, and is not recorded as one.
func auditRefusal(ctx context.Context, f *cmdutil.Factory, cmd *cobra.Command, err error) {
	action := ""
	if cmd != nil {
		action = cmdutil.AuditAction(cmd)
	}
	if action == "" || ExitCode(err) != ExitUsage || errors.Is(err, cmdutil.ErrNoTargets) {
		return
	}
	f.RecordRefusal(ctx, admin.Refusal{Action: action, Targets: cmd.Flags().Args(), Reason: err.Error()})
}

// subcommand builds one command under the root.
type subcommand struct {
	name  string
	build func(*cmdutil.Factory) *cobra.Command
}

// subcommands are the commands under the root, in the order they are added.
// The name of each is the name its build gives it (a test checks it), so
// that the command a command line runs is found before any is built.
func subcommands() []subcommand {
	return []subcommand{
		{"send", func(f *cmdutil.Factory) *cobra.Command { return send.NewCmd(f, nil) }},
		{"queue", queue.NewCmd},
		{"message", message.NewCmd},
		{"blacklist", blacklist.NewCmd},
		{"tx", tx.NewCmd},
		{"tune", tune.NewCmd},
		{"eoio", eoio.NewCmd},
		{"node", node.NewCmd},
		{"audit", audit.NewCmd},
		{"purge", func(f *cmdutil.Factory) *cobra.Command { return purge.NewCmd(f, nil) }},
		{"config", configcmd.NewCmd},
		{"serve", serve.NewCmd},
		{"migrate", func(f *cmdutil.Factory) *cobra.Command { return migrate.NewCmd(f, nil) }},
		{"token", token.NewCmd},
		{"demo", demo.NewCmd},
		{"bench", bench.NewCmd},
		{"tui", func(f *cmdutil.Factory) *cobra.Command { return tuicmd.NewCmd(f, nil) }},
		{"version", newVersionCmd},
		{"completion", func(*cmdutil.Factory) *cobra.Command { return newCompletionCmd() }},
	}
}

// NewRootCmd builds the whole command tree.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := newRoot(f)
	for _, sc := range subcommands() {
		root.AddCommand(sc.build(f))
	}
	f.RegisterCompletions(root)
	return root
}

// newRootFor builds the tree that the command line args needs: the root
// with the one command args runs, built alone, as its help, its flags and
// its errors are the same in the whole tree. The root's own help, help
// topics, unknown commands (whose suggestions name the others), shell
// completion and the completion scripts need the whole tree.
func newRootFor(f *cmdutil.Factory, args []string) *cobra.Command {
	root := newRoot(f)
	// Stand-ins named like the commands let cobra find, with the root's
	// flags, the command that args names; none is built yet.
	scs := subcommands()
	standIns := make([]*cobra.Command, len(scs))
	for i, sc := range scs {
		standIns[i] = &cobra.Command{Use: sc.name, Args: cobra.ArbitraryArgs, Run: func(*cobra.Command, []string) {}}
	}
	root.AddCommand(standIns...)
	found, _, err := root.Find(args)
	root.RemoveCommand(standIns...)
	if err == nil && found != root && found.Name() != "completion" {
		for _, sc := range scs {
			if sc.name == found.Name() {
				root.AddCommand(sc.build(f))
				return root
			}
		}
	}
	for _, sc := range scs {
		root.AddCommand(sc.build(f))
	}
	f.RegisterCompletions(root)
	return root
}

// newRoot builds the root command, with the global flags and no command
// under it.
func newRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "queuectl",
		Short: "Administer asynchronous message queues: EO and EOIO queues, blocked heads, the blacklist",
		Long: `queuectl keeps asynchronous message flows healthy. It stores messages with two
qualities of service — EO (exactly once, spread over parallel queues) and EOIO
(exactly once in order, per application queue) — and delivers them with its own
engine ('queuectl serve'). Operators list queues, find the message that blocks
an ordered queue, resend or fail it, release what a crash put on the blacklist,
and tune how widely EO traffic is spread: from the shell, in scripts, and in a
live terminal UI ('queuectl tui').

Every command works on the embedded store (a bbolt file, by default
$XDG_DATA_HOME/queuectl/queuectl.db), through the socket of a server that holds
it, on a PostgreSQL database shared by a cluster (--store postgres://…), or
against a remote server with --server or a context.

New here? Run 'queuectl demo', then 'queuectl queue blocked'.`,
		Version:       buildinfo.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: true,
		},
	}
	root.SetVersionTemplate(buildinfo.String() + "\n")
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	// --timeout bounds every command but the long-running ones.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		f.CreateStore = cmdutil.MayCreateStore(cmd)
		f.Acting = cmdutil.MayAct(cmd)
		// Shell completion parses the global flags itself, after this runs:
		// reading the configuration now would read it without them.
		if cmd.Name() == "serve" || cmd.Name() == "demo" || cmd.Name() == cobra.ShellCompRequestCmd {
			return nil
		}
		ctx, cancel := f.Context(cmd.Context())
		cmd.SetContext(ctx)
		cmd.PostRunE = func(*cobra.Command, []string) error { cancel(); return nil }
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return domain.WithHint(domain.ErrInvalid, err.Error(), "see '"+c.CommandPath()+" --help'")
	})

	pf := root.PersistentFlags()
	pf.String("db", "", "embedded store file (default $XDG_DATA_HOME/queuectl/queuectl.db)")
	pf.String("store", "", "store URL: bolt:///path/to/file.db or postgres://user@host/database (overrides --db)")
	pf.String("config", "", "config file (default $XDG_CONFIG_HOME/queuectl/config.yaml)")
	pf.String("server", "", "talk to a queuectl server: http(s)://host:port or unix:///path/to/queuectl.db.sock")
	pf.String("context", "", "use a server and token, or a store, from contexts: in the config file")
	pf.String("token", "", "bearer token for --server (prefer --token-file)")
	pf.String("token-file", "", "file holding the bearer token for --server")
	pf.String("ca-file", "", "PEM file of the CA certificates that an https --server's certificate is checked against")
	pf.StringP("output", "o", "table", "output format: table, wide, json, jsonl, yaml, ids")
	pf.Bool("no-color", false, "disable colour (also NO_COLOR)")
	pf.BoolP("quiet", "q", false, "print only data, no hints or progress")
	pf.Duration("timeout", 0, "give up after this long (e.g. 30s); 0 waits as long as needed; serve and demo ignore it")
	f.GlobalFlags = pf
	_ = root.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"table", "wide", "json", "jsonl", "yaml", "ids"}, cobra.ShellCompDirectiveNoFileComp
	})
	return root
}

// classifyCobraError marks cobra's own usage errors (unknown command, wrong
// number of arguments) as usage errors, exit 2. They are recognised by their
// text, so an error that already has a kind of its own is left alone.
func classifyCobraError(err error) error {
	if ExitCode(err) != ExitError {
		return err
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			hint := "see 'queuectl --help'"
			// cobra appends its suggestions to the message; make them the hint.
			if m, s, ok := strings.Cut(msg, "\n\nDid you mean this?\n"); ok {
				if f := strings.Fields(s); len(f) > 0 {
					hint = fmt.Sprintf("did you mean 'queuectl %s'? %s", f[0], hint)
				}
				msg = m
			}
			return domain.WithHint(domain.ErrInvalid, strings.TrimSpace(msg), hint)
		}
	}
	return err
}
