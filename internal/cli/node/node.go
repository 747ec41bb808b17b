// Package node implements `queuectl node`: the nodes that serve a store
// (§11).
package node

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl node` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "See the nodes that serve the store",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil))
	return cmd
}

// ListOptions are the parsed flags of `node list`.
type ListOptions struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Hintf  func(format string, args ...any)
	// Embedded reports whether the store is a bbolt file: an empty list
	// then means that no serve process holds it.
	Embedded func() bool
	Now      func() time.Time
	Watch    cmdutil.WatchOptions
}

// NewListCmd builds `node list`.
func NewListCmd(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf, Embedded: f.EmbeddedStore, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the nodes serving the store: address, heartbeat, liveness, queues owned, in-flight",
		Long: `List the nodes that serve the store, one row per incarnation: a restarted
node keeps its id and gets a new incarnation, which INCARNATION tells apart.

On PostgreSQL these are the nodes of the cluster: every live one, the
dead ones whose crash recovery has not run yet, and those that stopped or
were recovered within the last hour. STATE is alive while the node's
heartbeat, on the database clock, is within cluster.lease_ttl; stopped once
it left cleanly (SIGTERM); dead once its heartbeat expired, until another
node has run crash recovery on what it had in flight; then recovered. QUEUES counts the queues
whose unexpired lease it holds; IN FLIGHT the messages it had DLNG at its
last heartbeat. queue list -o wide shows each queue's OWNER.

An embedded (bbolt) store has at most one node: the serve process that
holds the file, which owns every queue. With no server running the list is
empty, and says so on stderr.`,
		Example: `  queuectl node list
  queuectl node list -o json | jq '.[] | select(.alive | not)'
  queuectl --store postgres://db.example/queuectl node list -o wide
  queuectl node list -w`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.Watch(cmd.Context(), opts.Watch, cmd.CommandPath(), func(ctx context.Context, out io.Writer, hintf func(string, ...any)) error {
				o := *opts
				streams := *o.IO
				o.IO, o.Hintf, streams.Out = &streams, hintf, out
				if runF != nil {
					return runF(ctx, &o)
				}
				return RunList(ctx, &o)
			})
		},
	}
	cmdutil.AddWatchFlags(cmd, &opts.Watch)
	return cmd
}

// RunList prints the nodes.
func RunList(ctx context.Context, opts *ListOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	nodes, err := svc.Nodes(ctx)
	if err != nil {
		return err
	}
	l := output.NewList(opts.IO.Out, format, columns(opts.Now), func(n admin.Node) string { return n.ID })
	for _, n := range nodes {
		if err := l.Add(n); err != nil {
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	if len(nodes) == 0 {
		if opts.Embedded != nil && opts.Embedded() {
			opts.Hintf("embedded store: no node is serving it (queuectl serve runs one)")
		} else {
			opts.Hintf("no node is serving this store (queuectl serve runs one)")
		}
	}
	return nil
}

func columns(now func() time.Time) []output.Column[admin.Node] {
	return []output.Column[admin.Node]{
		{Header: "ID", Max: 64, Value: func(n admin.Node) string { return n.ID }},
		// A restarted node keeps its id: the incarnation tells its rows apart.
		{Header: "INCARNATION", Max: 20, Value: func(n admin.Node) string {
			return strconv.FormatUint(n.Incarnation, 10)
		}},
		{Header: "ADDRESS", Max: 80, Value: func(n admin.Node) string { return output.Dash(n.Address) }},
		{Header: "STATE", Max: 9, Value: func(n admin.Node) string { return output.Dash(n.State) }},
		{Header: "STARTED", Max: 5, Value: func(n admin.Node) string { return output.Age(&n.StartedAt, now()) }},
		{Header: "HEARTBEAT", Max: 5, Value: func(n admin.Node) string { return output.Age(&n.HeartbeatAt, now()) }},
		{Header: "STARTED AT", Max: 20, Wide: true, Value: func(n admin.Node) string { return output.Time(&n.StartedAt) }},
		{Header: "HEARTBEAT AT", Max: 20, Wide: true, Value: func(n admin.Node) string { return output.Time(&n.HeartbeatAt) }},
		{Header: "QUEUES", Max: 8, Value: func(n admin.Node) string { return strconv.Itoa(n.Queues) }},
		{Header: "IN FLIGHT", Max: 8, Value: func(n admin.Node) string { return strconv.Itoa(n.InFlight) }},
	}
}
