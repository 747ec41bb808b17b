// Package message implements `queuectl message`: list, show and read
// messages, and resend or fail them.
package message

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// NewCmd builds `queuectl message` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "message",
		Short: "List, inspect, read, correct, resend and fail messages",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RunGroup,
	}
	cmd.AddCommand(NewListCmd(f, nil), NewShowCmd(f, nil), NewPayloadCmd(f, nil), NewEditCmd(f, nil), NewResendCmd(f, nil), NewFailCmd(f, nil))
	return cmd
}

// Columns are the table columns of a message, shared with `queue show`.
func Columns(now func() time.Time) []output.Column[*domain.Message] {
	return []output.Column[*domain.Message]{
		{Header: "ID", Max: 36, Value: func(m *domain.Message) string { return m.ID }},
		{Header: "QUEUE", Max: domain.MaxQueueName, Value: func(m *domain.Message) string { return m.Queue }},
		{Header: "SEQ", Max: 8, Value: func(m *domain.Message) string {
			if m.Seq == 0 {
				return "-"
			}
			return strconv.FormatUint(m.Seq, 10)
		}},
		{Header: "STATUS", Max: 6, Value: status},
		{Header: "QOS", Max: 4, Value: func(m *domain.Message) string { return string(m.QoS) }},
		{Header: "STAGE", Max: 8, Wide: true, Value: func(m *domain.Message) string { return string(m.Stage) }},
		{Header: "SENDER", Max: 20, Value: func(m *domain.Message) string { return m.Sender }},
		{Header: "RECEIVER", Max: 20, Value: receivers},
		{Header: "APP QUEUE", Max: domain.MaxAppQueue, Wide: true, Value: func(m *domain.Message) string { return output.Dash(m.AppQueue) }},
		{Header: "INTERFACE", Max: 30, Wide: true, Value: func(m *domain.Message) string { return output.Dash(m.Interface) }},
		{Header: "ATTEMPTS", Max: 4, Wide: true, Value: func(m *domain.Message) string { return strconv.Itoa(m.Attempts) }},
		{Header: "CRASHES", Max: 4, Wide: true, Value: func(m *domain.Message) string { return strconv.Itoa(m.Crashes) }},
		{Header: "SIZE", Max: 9, Value: func(m *domain.Message) string { return domain.FormatBytes(m.Size) }},
		{Header: "AGE", Max: 5, Value: func(m *domain.Message) string { return output.Age(&m.CreatedAt, now()) }},
		{Header: "ERROR", Max: 40, Clip: 40, Value: func(m *domain.Message) string { return output.Dash(m.Error) }},
	}
}

// status shows the status, marking blacklisted messages.
func status(m *domain.Message) string {
	if m.Blacklisted {
		return string(m.Status) + "*"
	}
	return string(m.Status)
}

// receivers shows an outbound message's receiver, or the receivers an
// inbound message was sent to.
func receivers(m *domain.Message) string {
	if m.Receiver != "" {
		return m.Receiver
	}
	return output.Dash(strings.Join(m.Receivers, ","))
}
