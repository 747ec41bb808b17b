package message_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func parseListFlags(t *testing.T, args ...string) (*message.ListOptions, error) {
	t.Helper()
	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var got *message.ListOptions
	cmd := message.NewListCmd(f, func(_ context.Context, o *message.ListOptions) error {
		got = o
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return got, cmd.Execute()
}

func TestListFlags(t *testing.T) {
	t.Parallel()

	o, err := parseListFlags(t, "--status", "NDLV,WAIT", "--status", "HOLD", "--queue", "XBQIORDERS_DE",
		"--receiver", "WMS,ARCHIVE", "--sender", "ERP", "--app-queue", "ORDERS_DE", "--error", "timeout",
		"--older-than", "1h", "--newer-than", "7d", "--after", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", "--limit", "0",
		"--key", "order-4711")
	require.NoError(t, err)
	require.Equal(t, "order-4711", o.Key)
	require.True(t, o.KeyGiven)
	require.Equal(t, []string{"NDLV", "WAIT", "HOLD"}, o.Statuses)
	require.Equal(t, []string{"XBQIORDERS_DE"}, o.Queues)
	require.Equal(t, []string{"WMS", "ARCHIVE"}, o.Receivers)
	require.Equal(t, []string{"ERP"}, o.Senders)
	require.Equal(t, []string{"ORDERS_DE"}, o.AppQueues)
	require.Equal(t, "timeout", o.Error)
	require.Equal(t, "1h", o.OlderThan)
	require.Equal(t, "7d", o.NewerThan)
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", o.After)
	require.Zero(t, o.Limit, "--limit 0 lists all")

	o, err = parseListFlags(t)
	require.NoError(t, err)
	require.Equal(t, 100, o.Limit, "100 by default (§5)")
	require.Nil(t, o.Statuses)
	require.False(t, o.KeyGiven)

	_, err = parseListFlags(t, "NDLV")
	require.ErrorIs(t, err, domain.ErrInvalid, "a stray argument is a usage error")
}

// fakeAdmin is an admin service whose Messages records its filter and
// returns fixed messages, honouring the limit as a store does.
type fakeAdmin struct {
	admin.Service
	filter   admin.MessageFilter
	messages []*domain.Message
}

func (a *fakeAdmin) Messages(_ context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	a.filter = f
	for i, m := range a.messages {
		if f.Limit > 0 && i == f.Limit {
			break
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

type listBundle struct {
	opts   *message.ListOptions
	admin  *fakeAdmin
	out    *bytes.Buffer
	hints  []string
	opened bool
}

func setupList(t *testing.T, format output.Format) *listBundle {
	t.Helper()
	b := &listBundle{admin: &fakeAdmin{}, out: &bytes.Buffer{}}
	b.opts = &message.ListOptions{
		IO: &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: b.out, ErrOut: io.Discard},
		Admin: func() (admin.Service, error) {
			b.opened = true
			return b.admin, nil
		},
		Format: func() (output.Format, error) { return format, nil },
		Now:    func() time.Time { return now },
		Hintf: func(format string, args ...any) {
			b.hints = append(b.hints, strings.TrimSpace(strings.ReplaceAll(format, "%d", "N")))
		},
		Limit: 100,
	}
	return b
}

func TestRunListFilter(t *testing.T) {
	t.Parallel()

	b := setupList(t, output.JSON)
	o := b.opts
	o.Statuses = []string{"ndlv,Wait", "HOLD"}
	o.Queues = []string{"XBQIORDERS_DE, XBTI0000"}
	o.Receivers, o.Senders, o.AppQueues = []string{"WMS"}, []string{"ERP,SHOP"}, []string{"ORDERS_DE"}
	o.Error, o.OlderThan, o.NewerThan = "Timeout", "1h", "2026-03-01T00:00:00Z"
	o.After, o.Limit = "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", 20
	o.Key, o.KeyGiven = "order 4711/ÄÖ", true
	require.NoError(t, message.RunList(context.Background(), o))
	require.Equal(t, admin.MessageFilter{
		Statuses:  []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD},
		Queues:    []string{"XBQIORDERS_DE", "XBTI0000"},
		Receivers: []string{"WMS"}, Senders: []string{"ERP", "SHOP"}, AppQueues: []string{"ORDERS_DE"},
		ErrorText: "Timeout", Key: "order 4711/ÄÖ",
		OlderThan: now.Add(-time.Hour),
		NewerThan: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		After:     "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", Limit: 21, // one more than shown: is there a next page?
	}, b.admin.filter)
	require.Equal(t, "[]\n", b.out.String())
}

func TestRunListUsageErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		set  func(o *message.ListOptions)
		want string
	}{
		{"status", func(o *message.ListOptions) { o.Statuses = []string{"TBDL,DONE"} }, `status "DONE"`},
		{"app queue", func(o *message.ListOptions) { o.AppQueues = []string{"orders_de"} }, "lowercase"},
		{"after", func(o *message.ListOptions) { o.After = "42" }, `--after: message id "42"`},
		{"older than", func(o *message.ListOptions) { o.OlderThan = "yesterday" }, `--older-than "yesterday"`},
		{"newer than", func(o *message.ListOptions) { o.NewerThan = "-1h" }, `--newer-than "-1h"`},
		{"limit", func(o *message.ListOptions) { o.Limit = -5 }, "--limit -5"},
		{"empty key", func(o *message.ListOptions) { o.KeyGiven = true }, "--key is empty; a key is 1-128 printable characters"},
		{"bad key", func(o *message.ListOptions) { o.Key, o.KeyGiven = "a\tb", true }, `key "a\tb" contains the control character U+0009`},
	}
	for _, tt := range tests {
		b := setupList(t, output.Table)
		tt.set(b.opts)
		err := message.RunList(context.Background(), b.opts)
		require.ErrorIs(t, err, domain.ErrInvalid, tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
		require.False(t, b.opened, "%s: checked before the store is opened", tt.name)
	}
}

func testMessages(n int) []*domain.Message {
	ids := []string{
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1b",
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1c", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1d",
	}
	out := make([]*domain.Message, n)
	for i := range out {
		out[i] = &domain.Message{
			ID: ids[i], QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Queue: "XBTI0000",
			Stage: domain.Inbound, Seq: uint64(i + 1), Status: domain.StatusTBDL, Size: 2048, CreatedAt: now.Add(-90 * time.Second),
		}
	}
	return out
}

func TestRunListTable(t *testing.T) {
	t.Parallel()

	b := setupList(t, output.Table)
	b.admin.messages = testMessages(2)
	b.admin.messages[1].Status, b.admin.messages[1].Blacklisted = domain.StatusNDLV, true
	b.admin.messages[1].Error = "node died while delivering; this text is longer than forty characters"
	require.NoError(t, message.RunList(context.Background(), b.opts))
	require.Equal(t, ""+
		"ID                                    QUEUE     SEQ  STATUS  QOS  SENDER  RECEIVER  SIZE  AGE  ERROR\n"+
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a  XBTI0000  1    TBDL    EO   ERP     WMS       2KiB  1m   -\n"+
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1b  XBTI0000  2    NDLV*   EO   ERP     WMS       2KiB  1m   node died while delivering; this text i…\n",
		b.out.String(), "a blacklisted message is marked with *, long errors are cut")
	require.Empty(t, b.hints)
}

func TestRunListHints(t *testing.T) {
	t.Parallel()

	b := setupList(t, output.Table)
	require.NoError(t, message.RunList(context.Background(), b.opts))
	require.Equal(t, []string{"no messages match"}, b.hints)

	b = setupList(t, output.Table)
	b.admin.messages = testMessages(4)
	b.opts.Limit = 2
	require.NoError(t, message.RunList(context.Background(), b.opts))
	require.Equal(t, 3, strings.Count(b.out.String(), "\n"), "a header and two rows")
	require.Len(t, b.hints, 1)
	require.Contains(t, b.hints[0], "showing the first N; next page: --after", "a cut page says how to go on")

	b = setupList(t, output.IDs)
	b.admin.messages = testMessages(4)
	b.opts.Limit = 2
	require.NoError(t, message.RunList(context.Background(), b.opts))
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a\n0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1b\n", b.out.String(),
		"-o ids output stays clean for pipes")
	require.Len(t, b.hints, 1, "and stderr says the list was cut, so a pipe does not pass on part of it unseen")
	require.Contains(t, b.hints[0], "showing the first N; next page: --after")
}

// TestColumnsMax checks that the widest value each column can show fits its
// Max, which sizes the columns of a table too long to measure.
func TestColumnsMax(t *testing.T) {
	t.Parallel()

	m := &domain.Message{
		ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a", Queue: "XBQOE8B9ORDERS_DE_12345", Seq: 99_999_999,
		Status: domain.StatusNDLV, Blacklisted: true, QoS: domain.EOIO, Stage: domain.Outbound,
		AppQueue: "ORDERS_DE_123456", Attempts: 9999, Crashes: 9999, CreatedAt: now.Add(-9999 * 24 * time.Hour),
		Error: strings.Repeat("e", 100),
	}
	sizes := []int64{1023, 1023 * 1024, 1048473, 1048575, 1023<<20 + 1000, 10 << 30}
	for _, c := range message.Columns(func() time.Time { return now }) {
		if c.Clip > 0 {
			// A free-text column: the table clips it to Clip.
			require.LessOrEqual(t, c.Clip, c.Max, "column %s", c.Header)
			continue
		}
		for _, size := range sizes {
			m.Size = size
			v := c.Value(m)
			require.LessOrEqual(t, len([]rune(v)), c.Max, "column %s: %q is wider than its Max %d", c.Header, v, c.Max)
		}
	}
}
