// Package queue implements `queuectl queue`: list, show, stop, start
// and delete physical queues.
package queue

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl queue` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List, inspect, stop, start and delete physical queues",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewShowCmd(f, nil), NewBlockedCmd(f, nil), NewStopCmd(f, nil), NewStartCmd(f, nil),
		NewDeleteCmd(f, nil))
	return cmd
}

// Columns are the table columns of a queue; queue show's summary uses them too.
func Columns(now func() time.Time) []output.Column[*domain.Queue] {
	count := func(s domain.Status) func(*domain.Queue) string {
		return func(q *domain.Queue) string { return strconv.FormatInt(q.Counts[s], 10) }
	}
	return []output.Column[*domain.Queue]{
		{Header: "NAME", Max: domain.MaxQueueName, Value: func(q *domain.Queue) string { return q.Name }},
		{Header: "QOS", Max: 4, Value: func(q *domain.Queue) string { return string(q.QoS) }},
		{Header: "STAGE", Max: 8, Value: func(q *domain.Queue) string { return string(q.Stage) }},
		{Header: "STATE", Max: 7, Value: func(q *domain.Queue) string { return string(q.State) }},
		{Header: "DEPTH", Max: 8, Value: func(q *domain.Queue) string { return strconv.FormatInt(q.Depth, 10) }},
		{Header: "PEND", Max: 8, Wide: true, Value: count(domain.StatusPEND)},
		{Header: "STUCK", Max: 8, Wide: true, Value: func(q *domain.Queue) string { return strconv.FormatInt(q.Stuck, 10) }},
		{Header: "TBDL", Max: 8, Value: count(domain.StatusTBDL)},
		{Header: "DLNG", Max: 4, Value: count(domain.StatusDLNG)},
		{Header: "WAIT", Max: 8, Value: count(domain.StatusWAIT)},
		{Header: "HOLD", Max: 8, Value: count(domain.StatusHOLD)},
		{Header: "NDLV", Max: 8, Value: count(domain.StatusNDLV)},
		{Header: "DLVD", Max: 10, Wide: true, Value: count(domain.StatusDLVD)},
		{Header: "FAIL", Max: 8, Wide: true, Value: count(domain.StatusFAIL)},
		{Header: "HEAD", Max: 4, Value: func(q *domain.Queue) string {
			if q.Head == nil {
				return "-"
			}
			return string(q.Head.Status)
		}},
		{Header: "HEAD ID", Max: 36, Wide: true, Value: func(q *domain.Queue) string {
			if q.Head == nil {
				return "-"
			}
			return q.Head.ID
		}},
		{Header: "BLOCKED", Max: 5, Value: func(q *domain.Queue) string { return output.Age(q.BlockedSince, now()) }},
		{Header: "OLDEST", Max: 5, Value: func(q *domain.Queue) string { return output.Age(q.OldestAt, now()) }},
		{Header: "RECEIVER", Max: domain.MaxPartyName, Wide: true, Value: func(q *domain.Queue) string { return output.Dash(q.Receiver) }},
		{Header: "OWNER", Max: 20, Wide: true, Value: func(q *domain.Queue) string { return output.Dash(q.Owner) }},
	}
}
