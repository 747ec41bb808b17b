package cmdutil

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
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
		return listed(done, names), cobra.ShellCompDirectiveNoFileComp
	}
}

// listed puts the values of a list typed so far (done, "NDLV,") before
// each candidate, leaving out those it holds already, in any case.
func listed(done string, candidates []string) []string {
	given := map[string]bool{}
	for _, v := range strings.Split(done, ",") {
		given[strings.ToUpper(strings.TrimSpace(v))] = true
	}
	out := make([]string, 0, len(candidates))
	for _, c := range candidates {
		if !given[strings.ToUpper(c)] {
			out = append(out, done+c)
		}
	}
	return out
}

// maxCandidates bounds what completion offers: a shell shows no more.
const maxCandidates = 1000

// CompleteMessageIDs completes the ids of messages an action applies to —
// in these statuses (any, when none are given), blacklisted ones only with
// blacklisted — each with its status and queue as the description. Ids on
// the command line already are not offered again.
func (f *Factory) CompleteMessageIDs(statuses []domain.Status, blacklisted bool) CompleteFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if slices.Contains(args, "-") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		svc, err := f.Admin()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
		defer cancel()
		filter := admin.MessageFilter{Statuses: statuses}
		if blacklisted {
			filter.Blacklisted = &blacklisted
		}
		prefix := strings.ToLower(toComplete)
		var out []string
		_ = svc.Messages(ctx, filter, func(m *domain.Message) error {
			if strings.HasPrefix(m.ID, prefix) && !slices.Contains(args, m.ID) {
				out = append(out, m.ID+"\t"+string(m.Status)+" "+m.Queue)
			}
			if len(out) == maxCandidates {
				return admin.ErrStop
			}
			return nil
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteQueues completes the names of the queues a queue action applies
// to: the running ones to stop, the stopped ones to start. Names on the
// command line already are not offered again.
func (f *Factory) CompleteQueues(action admin.Action) CompleteFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if slices.Contains(args, "-") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		svc, err := f.Admin()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
		defer cancel()
		var out []string
		_ = svc.Queues(ctx, admin.QueueFilter{}, func(q *domain.Queue) error {
			if action.Selects(q) && strings.HasPrefix(q.Name, toComplete) && !slices.Contains(args, q.Name) {
				out = append(out, q.Name)
			}
			if len(out) == maxCandidates {
				return admin.ErrStop
			}
			return nil
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// noFiles completes nothing, and no file names: the arguments of
// queuectl's commands are never files.
func noFiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// flagNames are the flags, by name, that take names of a kind wherever
// they appear: names the store or the server knows.
var flagNames = map[string]admin.NameKind{
	"queue": admin.NameQueue, "name": admin.NameQueue, "receiver": admin.NameReceiver,
}

// flagValues are the flags that take one of a fixed set of values, which
// complete without a store, in their order: statuses and states in the
// order of a message's and a queue's life.
var flagValues = map[string][]string{
	"qos": {"EO", "EOIO"}, "stage": {"inbound", "outbound"},
	"status": strs(domain.Statuses), "state": strs(domain.QueueStates),
}

// strs writes values of a string type as strings.
func strs[S ~string](values []S) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

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
		// Without a completion of its own, an argument completes to
		// nothing rather than to the file names of the shell's default.
		if cmd.ValidArgsFunction == nil && len(cmd.ValidArgs) == 0 && !cmd.HasSubCommands() {
			cmd.ValidArgsFunction = noFiles
		}
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
}

// CompleteValues completes a flag from a fixed list of values, in the
// list's order, without asking a store or a server: those that start with
// what is typed (in any case), and after a comma one more value of a list.
func CompleteValues(values ...string) CompleteFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		var match []string
		for _, v := range values {
			if strings.HasPrefix(strings.ToUpper(v), strings.ToUpper(last)) {
				match = append(match, v)
			}
		}
		return listed(done, match), cobra.ShellCompDirectiveNoFileComp
	}
}
