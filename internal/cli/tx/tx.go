// Package tx implements `queuectl tx`: the prepared (PEND) messages of
// transactional sends (§9), the engine's check-back with their producers,
// and committing or rolling them back.
package tx

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// NewCmd builds `queuectl tx` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tx",
		Short: "Transactional sends: list, commit and roll back prepared (PEND) messages",
		Long: `A producer that must send a message if and only if its own business
transaction commits sends it with 'queuectl send --prepare': the message is
stored as PEND and not delivered. When the business transaction has
committed, 'tx commit ID' makes it TBDL (EOIO: its seq is assigned then, so
order is commit order); when it failed, 'tx rollback ID' deletes it (the
audit log keeps the rollback).

If the producer dies in between, 'queuectl serve' checks back with it: a
PEND message older than tx.check_after is POSTed as {"id", "sender",
"interface", "headers"} to its sender's senders.<name>.check_url every
tx.check_interval. {"state":"commit"} commits it, {"state":"rollback"}
rolls it back; "unknown", an error or a timeout leave it PEND, and after
tx.max_checks such checks it is marked stuck: it stays PEND until an
operator commits or rolls it back. A sender with no check_url cannot be
asked: its PEND messages are marked stuck at once, after tx.check_after.`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewCommitCmd(f, nil), NewRollbackCmd(f, nil))
	return cmd
}

// Entry is a tx entry (§5): a PEND message, with its check-back — how often
// its producer was asked, when last, what it answered, and whether the
// engine gave up asking — always present, also at zero.
type Entry struct {
	*domain.Message
}

// entryJSON is an Entry as JSON: the message's fields, with the
// check-back's at the top level, where they shadow the message's own.
type entryJSON struct {
	*domain.Message
	Checks      int        `json:"checks"`
	LastCheckAt *time.Time `json:"last_check_at"`
	LastAnswer  string     `json:"last_answer"`
	Stuck       bool       `json:"stuck"`
}

// MarshalJSON writes the message with checks, last_check_at, last_answer
// and stuck, null and zero included.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{Message: e.Message, Checks: e.Checks, LastCheckAt: e.LastCheckAt,
		LastAnswer: e.LastAnswer, Stuck: e.Stuck})
}

// MarshalYAML writes the message with checks, last_check_at, last_answer
// and stuck, null and zero included, as JSON does.
func (e Entry) MarshalYAML() (any, error) {
	var n yaml.Node
	if err := n.Encode(e.Message); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key   string
		value any
	}{{"checks", e.Checks}, {"last_check_at", e.LastCheckAt}, {"last_answer", e.LastAnswer}, {"stuck", e.Stuck}} {
		var v yaml.Node
		if err := v.Encode(f.value); err != nil {
			return nil, err
		}
		setKey(&n, f.key, &v)
	}
	return &n, nil
}

// setKey sets key of mapping node n to v, in place where n has it, at the
// end otherwise.
func setKey(n *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// Filters are the selection flags of `tx list`, which `tx commit` and
// `tx rollback` take for --all.
type Filters struct {
	Queues    []string
	Senders   []string
	OlderThan string
	// Stuck selects the stuck messages, or with --stuck=false the others;
	// StuckSet says the flag was given.
	Stuck    bool
	StuckSet bool
}

// filterFlags are the names of the Filters flags.
var filterFlags = []string{"queue", "sender", "older-than", "stuck"}

func (o *Filters) addFlags(fl *pflag.FlagSet, prefix string) {
	fl.StringSliceVar(&o.Queues, "queue", nil, prefix+"only these physical queues")
	fl.StringSliceVar(&o.Senders, "sender", nil, prefix+"only messages from these senders")
	fl.StringVar(&o.OlderThan, "older-than", "", prefix+"only messages prepared before this long ago (or this time)")
	fl.BoolVar(&o.Stuck, "stuck", false, prefix+"only messages the check-back gave up on (--stuck=false: only the others)")
}

// setFrom records which of the filter flags cmd was given.
func (o *Filters) setFrom(cmd *cobra.Command) {
	o.StuckSet = cmd.Flags().Changed("stuck")
}

// filter returns the PEND messages the flags select.
func (o *Filters) filter(now time.Time) (admin.MessageFilter, error) {
	f := admin.MessageFilter{
		Statuses: []domain.Status{domain.StatusPEND},
		Queues:   cmdutil.SplitList(o.Queues), Senders: cmdutil.SplitList(o.Senders),
	}
	if o.StuckSet {
		stuck := o.Stuck
		f.Stuck = &stuck
	}
	var err error
	f.OlderThan, err = cmdutil.ParseAge("older-than", o.OlderThan, now)
	return f, err
}
