// Package config implements `queuectl config`: show the effective
// configuration, and check it.
package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl config` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and check the configuration",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(newViewCmd(f), newCheckCmd(f), newGetContextsCmd(f), newUseContextCmd(f))
	return cmd
}

func newViewCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "view",
		Short: "Print the effective configuration (flags > env > file > defaults), secrets redacted",
		Long: `Print the configuration this invocation runs with: defaults, overridden by
the config file, by QUEUECTL_* environment variables, and by flags. Tokens and
passwords are shown as REDACTED. The output is YAML that can serve as a config
file; -o json prints it as JSON.

It starts with the target commands act on — a server, a store URL or a store
file — and what chose it: a flag, an environment variable, the config file,
a context (named by --context or current_context), or the default. -o json
has it as "target".`,
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
			target, err := cmdutil.TargetOf(c, f.GlobalFlags)
			if err != nil {
				return err
			}
			r := c.Redacted()
			doc, err := document(r)
			if err != nil {
				return err
			}
			if m, ok := doc.(map[string]any); ok && !format.Tabular() && format != output.YAML {
				m["target"] = target
			}
			return output.Value(f.IO.Out, format, doc, func(w io.Writer, _ bool) error {
				src := "none found; defaults, environment and flags only"
				if c.File != "" {
					src = c.File
				}
				fmt.Fprintf(w, "# config file: %s\n", src)
				fmt.Fprintf(w, "# target: %s %s, from %s\n", target.Kind, target.Value, target.Source)
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

// checkReport is what `config check -o json` prints.
type checkReport struct {
	OK        bool     `json:"ok" yaml:"ok"`
	File      string   `json:"file" yaml:"file"`
	Receivers []string `json:"receivers" yaml:"receivers"`
	Routes    int      `json:"routes" yaml:"routes"`
	// Senders are the senders with a check_url: those the engine checks
	// back with about their prepared messages (§9).
	Senders  []string `json:"senders" yaml:"senders"`
	Problems []string `json:"problems" yaml:"problems"`
	// Unconfigured are the receivers that messages in the store wait for
	// and the configuration lacks (§8): a warning, not a problem.
	Unconfigured []admin.ReceiverBacklog `json:"unconfigured" yaml:"unconfigured"`
	// CodeClashes are the configured receivers whose names share their
	// code (§3) with another's: a note, not a problem — each has queues of
	// its own, under the code the store gave it or will give it.
	CodeClashes []domain.CodePlan `json:"code_clashes" yaml:"code_clashes"`
}

func newCheckCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Check the configuration: every key known, every value in range, every route to a configured receiver",
		Long: `Check the configuration this invocation runs with (defaults, the config file,
QUEUECTL_* environment variables, flags) and list every problem, each naming
its key: unknown keys, values out of range, receivers without what their type
needs, routes to receivers that are not configured, empty or null names (YAML
reads null, NULL and ~ as no value: quote such a name). Exit 0 when there is
none, 2 when there is any.

It also looks at the store the configuration names, when there is one (not
a server's): the receivers that stored messages wait for but the
configuration lacks are listed as warnings, with how many messages wait. A
serve started with it leaves those messages TBDL, for a node that has the
receiver. Warnings do not change the exit code: a node of a cluster may
lack a receiver on purpose.

Receivers whose names give the same four-hex-digit code (RCV0 and RCV1450
both give F8A4) are noted too: the store gives each receiver a code of its
own at its first message, the code of its name first, the next free code on
a clash, so each has queues of its own; the note says which code a receiver
has in its queue names, or will get.

Every command refuses a configuration with a problem, naming the first one;
'queuectl serve' runs the same check before it opens the store.`,
		Example: `  queuectl config check
  queuectl --config ./prod.yaml config check
  queuectl config check -o json | jq .problems`,
		Args: cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, cerr := f.Config()
			format, err := f.Format()
			if err != nil && f.GlobalFlags != nil {
				// The configuration could not say: the flag can.
				format, err = output.ParseFormat(f.GlobalFlags.Lookup("output").Value.String())
			}
			if err != nil || format == output.IDs {
				format = output.Table
			}
			r := checkReport{OK: cerr == nil, Receivers: []string{}, Senders: []string{}, Problems: []string{},
				Unconfigured: []admin.ReceiverBacklog{}, CodeClashes: []domain.CodePlan{}}
			if c != nil {
				r.File = c.File
				r.Receivers = slices.Sorted(maps.Keys(c.Receivers))
				r.Routes = len(c.Routes)
				for _, name := range slices.Sorted(maps.Keys(c.Senders)) {
					if c.Senders[name].CheckURL != "" {
						r.Senders = append(r.Senders, name)
					}
				}
			}
			var ps config.Problems
			switch {
			case errors.As(cerr, &ps):
				for _, p := range ps {
					r.Problems = append(r.Problems, p.Error())
				}
			case cerr != nil:
				r.Problems = append(r.Problems, cerr.Error())
			}
			var lookErr error
			if cerr == nil {
				var lacking []admin.ReceiverBacklog
				var clashes []domain.CodePlan
				if lacking, clashes, lookErr = lookAtStore(f, r.Receivers); lookErr == nil {
					r.Unconfigured = append(r.Unconfigured, lacking...)
					r.CodeClashes = append(r.CodeClashes, clashes...)
				}
			}
			if lookErr != nil {
				// The configuration is what is checked: a store that cannot
				// be read now says nothing about it.
				fmt.Fprintf(f.IO.ErrOut, "queuectl: could not look at the store for messages waiting for receivers: %v\n", lookErr)
			}
			if !format.Tabular() {
				if err := output.Value(f.IO.Out, format, r, nil, nil); err != nil {
					return err
				}
			} else if r.OK {
				src := r.File
				if src == "" {
					src = "none; defaults, environment and flags only"
				}
				checks := ""
				if len(r.Senders) > 0 {
					checks = fmt.Sprintf(", check-back with %s (%s)", count(len(r.Senders), "sender"), strings.Join(r.Senders, ", "))
				}
				fmt.Fprintf(f.IO.Out, "configuration OK (config file: %s): %s (%s), %s%s\n", src,
					count(len(r.Receivers), "receiver"), output.Dash(strings.Join(r.Receivers, ", ")), count(r.Routes, "route"), checks)
				for _, b := range r.Unconfigured {
					fmt.Fprintf(f.IO.ErrOut, "queuectl: warning: receiver %s is not configured; messages waiting for it: %d (in %s)\n",
						b.Receiver, b.Messages, count(b.Queues, "queue"))
				}
				printClashes(f.IO.ErrOut, r.CodeClashes)
			} else {
				fmt.Fprintf(f.IO.ErrOut, "queuectl: the configuration has %s:\n", count(len(r.Problems), "problem"))
				for _, p := range r.Problems {
					fmt.Fprintf(f.IO.ErrOut, "  %s\n", p)
				}
			}
			if cerr != nil {
				return cmdutil.Printed(cerr)
			}
			return nil
		},
	}
}

// lookAtStore looks at the store of the configuration, when there is one
// (not a server's, which is for its own configuration to judge): the
// receivers that its messages wait for and that receivers lacks, and the
// receivers whose codes clash (codeClashes). A store that is not there
// holds no message and has given no code.
func lookAtStore(f *cmdutil.Factory, receivers []string) ([]admin.ReceiverBacklog, []domain.CodePlan, error) {
	loc, ok := f.StoreTarget()
	if !ok {
		return nil, nil, nil
	}
	if loc.Path != "" {
		if _, err := os.Stat(loc.Path); errors.Is(err, fs.ErrNotExist) {
			return nil, codeClashes(map[string]string{}, receivers), nil
		}
	}
	svc, err := f.Admin()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := f.Context(context.Background())
	defer cancel()
	lacking, err := admin.Unconfigured(ctx, svc, receivers)
	if err != nil {
		return nil, nil, err
	}
	// The code a receiver was given is the one its outbound queues carry.
	assigned := map[string]string{}
	err = svc.Queues(ctx, admin.QueueFilter{Stages: []domain.Stage{domain.Outbound}}, func(q *domain.Queue) error {
		if code := domain.QueueCode(q.Name); code != "" && q.Receiver != "" && assigned[q.Receiver] == "" {
			assigned[q.Receiver] = code
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return lacking, codeClashes(assigned, receivers), nil
}

// codeClashes are the receivers, of those configured, that do not have or
// would not get the code of their name (§3), given the codes assigned.
func codeClashes(assigned map[string]string, receivers []string) []domain.CodePlan {
	var out []domain.CodePlan
	for _, p := range domain.PlanCodes(assigned, receivers) {
		if p.Clash != "" {
			out = append(out, p)
		}
	}
	return out
}

// printClashes notes each clash of codes: which code a receiver has, or
// what happens at the first messages.
func printClashes(w io.Writer, clashes []domain.CodePlan) {
	for _, p := range clashes {
		first := domain.Code4(p.Receiver)
		switch {
		case p.Assigned:
			fmt.Fprintf(w, "queuectl: note: receiver %s has code %s in its queue names: %s, the code of its name, is %s's\n",
				p.Receiver, p.Code, first, p.Clash)
		case p.Undecided:
			fmt.Fprintf(w, "queuectl: note: receivers %s and %s share the code %s of their names: the first to get a message keeps it, "+
				"the other gets the next free code; each gets queues of its own\n", p.Clash, p.Receiver, first)
		default:
			fmt.Fprintf(w, "queuectl: note: receiver %s will get code %s at its first message: %s, the code of its name, is %s's\n",
				p.Receiver, p.Code, first, p.Clash)
		}
	}
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
