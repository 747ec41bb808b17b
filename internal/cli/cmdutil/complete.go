package cmdutil

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/queuectl/queuectl/internal/admin"
)

// completeTimeout bounds how long shell completion waits for the service:
// a store held by a process that serves no socket completes nothing rather
// than keep the shell waiting.
const completeTimeout = 2 * time.Second

// CompleteFunc is cobra's completion function.
type CompleteFunc func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// CompleteNames completes names of a kind, asked of the admin service — the
// store's or the server's, whichever the command works on. A value after a
// comma completes as one more value of a list (--status NDLV,WA).
func (f *Factory) CompleteNames(kind admin.NameKind) CompleteFunc {
	return f.completeNames(kind, nil)
}

// CompleteSubs completes the subparameters of the tuning parameter given as
// the first argument.
func (f *Factory) CompleteSubs() CompleteFunc {
	return f.completeNames(admin.NameSub, func(args []string) string {
		if len(args) == 0 {
			return ""
		}
		return args[0]
	})
}

func (f *Factory) completeNames(kind admin.NameKind, param func(args []string) string) CompleteFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		svc, err := f.Admin()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
		defer cancel()
		p := admin.NamesParams{Kind: kind, Prefix: last}
		if param != nil {
			p.Param = param(args)
		}
		names, err := svc.Names(ctx, p)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		for i := range names {
			names[i] = done + names[i]
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// flagNames are the flags, by name, that take names of a kind wherever
// they appear.
var flagNames = map[string]admin.NameKind{
	"queue": admin.NameQueue, "name": admin.NameQueue, "receiver": admin.NameReceiver,
	"status": admin.NameStatus, "state": admin.NameState,
}

// flagValues are the flags that take one of a few fixed values.
var flagValues = map[string][]string{"qos": {"EO", "EOIO"}, "stage": {"inbound", "outbound"}}

// RegisterCompletions gives every command under root the completion of its
// flags that take names (queues, receivers, statuses, states, --sub) or a
// few fixed values, unless the command has its own.
func (f *Factory) RegisterCompletions(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			if _, ok := cmd.GetFlagCompletionFunc(fl.Name); ok {
				return
			}
			switch kind, named := flagNames[fl.Name]; {
			case named:
				_ = cmd.RegisterFlagCompletionFunc(fl.Name, f.CompleteNames(kind))
			case fl.Name == "sub":
				_ = cmd.RegisterFlagCompletionFunc(fl.Name, f.CompleteSubs())
			case flagValues[fl.Name] != nil:
				_ = cmd.RegisterFlagCompletionFunc(fl.Name, CompleteValues(flagValues[fl.Name]...))
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
}

// CompleteValues completes a flag from a fixed list of values.
func CompleteValues(values ...string) CompleteFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done = toComplete[:i+1]
		}
		out := make([]string, len(values))
		for i, v := range values {
			out[i] = done + v
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
