package queue_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/queue"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

func parseListFlags(t *testing.T, args ...string) (*queue.ListOptions, error) {
	t.Helper()
	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var got *queue.ListOptions
	cmd := queue.NewListCmd(f, func(_ context.Context, o *queue.ListOptions) error {
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

	o, err := parseListFlags(t, "--qos", "EO,EOIO", "--stage", "inbound", "--state", "BLOCKED,WAITING", "--state", "STOPPED",
		"--receiver", "WMS", "--name", "XBQ*", "--after", "XBQIA", "--limit", "20")
	require.NoError(t, err)
	require.Equal(t, []string{"EO", "EOIO"}, o.QoS)
	require.Equal(t, []string{"inbound"}, o.Stages)
	require.Equal(t, []string{"BLOCKED", "WAITING", "STOPPED"}, o.States, "comma-separated and repeated")
	require.Equal(t, []string{"WMS"}, o.Receivers)
	require.Equal(t, "XBQ*", o.Name)
	require.Equal(t, "XBQIA", o.After)
	require.Equal(t, 20, o.Limit)

	o, err = parseListFlags(t)
	require.NoError(t, err)
	require.Zero(t, o.Limit, "all queues by default")
	require.Nil(t, o.QoS)
	require.NotNil(t, o.Now)
	require.NotNil(t, o.Hintf)

	_, err = parseListFlags(t, "BLOCKED")
	require.ErrorIs(t, err, domain.ErrInvalid, "a stray argument is a usage error")
}

// fakeAdmin is an admin service whose Queues records its filter and
// returns fixed queues.
type fakeAdmin struct {
	admin.Service
	filter admin.QueueFilter
	queues []*domain.Queue
}

func (a *fakeAdmin) Queues(_ context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	a.filter = f
	for _, q := range a.queues {
		if err := fn(q); err != nil {
			return err
		}
	}
	return nil
}

type listBundle struct {
	opts   *queue.ListOptions
	admin  *fakeAdmin
	out    *bytes.Buffer
	hints  []string
	opened bool
}

func setupList(t *testing.T, format output.Format) *listBundle {
	t.Helper()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	b := &listBundle{admin: &fakeAdmin{}, out: &bytes.Buffer{}}
	b.opts = &queue.ListOptions{
		IO: &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: b.out, ErrOut: io.Discard},
		Admin: func() (admin.Service, error) {
			b.opened = true
			return b.admin, nil
		},
		Format: func() (output.Format, error) { return format, nil },
		Now:    func() time.Time { return now },
		Hintf:  func(format string, args ...any) { b.hints = append(b.hints, fmt.Sprintf(format, args...)) },
	}
	return b
}

func TestRunListFilter(t *testing.T) {
	t.Parallel()

	b := setupList(t, output.Table)
	b.opts.QoS = []string{"eoio"}
	b.opts.Stages = []string{"Outbound,inbound"}
	b.opts.States = []string{"blocked", "WAITING,stopped"}
	b.opts.Receivers = []string{"WMS,ARCHIVE", " BI "}
	b.opts.Name, b.opts.After, b.opts.Limit = "XBQ*", "XBQIA", 5
	require.NoError(t, queue.RunList(context.Background(), b.opts))
	require.Equal(t, admin.QueueFilter{
		QoS:       []domain.QoS{domain.EOIO},
		Stages:    []domain.Stage{domain.Outbound, domain.Inbound},
		States:    []domain.QueueState{domain.QueueBlocked, domain.QueueWaiting, domain.QueueStopped},
		Receivers: []string{"WMS", "ARCHIVE", "BI"},
		Name:      "XBQ*", After: "XBQIA", Limit: 5,
	}, b.admin.filter)
	require.Empty(t, b.out.String())
	require.Equal(t, []string{"no queue matches --name XBQ*"}, b.hints)
}

func TestRunListUsageErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		set  func(o *queue.ListOptions)
		want string
	}{
		{"qos", func(o *queue.ListOptions) { o.QoS = []string{"EO,XO"} }, `"XO"`},
		{"stage", func(o *queue.ListOptions) { o.Stages = []string{"middle"} }, `"middle"`},
		{"state", func(o *queue.ListOptions) { o.States = []string{"BUSY"} }, `queue state "BUSY"`},
		{"limit", func(o *queue.ListOptions) { o.Limit = -1 }, "--limit -1"},
	}
	for _, tt := range tests {
		b := setupList(t, output.Table)
		tt.set(b.opts)
		err := queue.RunList(context.Background(), b.opts)
		require.ErrorIs(t, err, domain.ErrInvalid, tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
		require.False(t, b.opened, "%s: checked before the store is opened", tt.name)
	}
}

func TestRunListOutput(t *testing.T) {
	t.Parallel()

	since := time.Date(2026, 3, 10, 11, 0, 0, 0, time.UTC)
	oldest := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	q := &domain.Queue{
		Name: "XBQIORDERS_DE", QoS: domain.EOIO, Stage: domain.Inbound, State: domain.QueueBlocked, Depth: 3,
		Counts:       map[domain.Status]int64{domain.StatusNDLV: 1, domain.StatusHOLD: 2, domain.StatusDLVD: 40},
		Head:         &domain.QueueHead{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", Status: domain.StatusNDLV, Since: since},
		BlockedSince: &since, OldestAt: &oldest,
	}

	b := setupList(t, output.Table)
	b.admin.queues = []*domain.Queue{q}
	require.NoError(t, queue.RunList(context.Background(), b.opts))
	require.Equal(t, ""+
		"NAME           QOS   STAGE    STATE    DEPTH  TBDL  DLNG  WAIT  HOLD  NDLV  HEAD  BLOCKED  OLDEST\n"+
		"XBQIORDERS_DE  EOIO  inbound  BLOCKED  3      0     0     0     2     1     NDLV  1h       2h\n", b.out.String())
	require.Empty(t, b.hints)

	b = setupList(t, output.Wide)
	b.admin.queues = []*domain.Queue{q}
	require.NoError(t, queue.RunList(context.Background(), b.opts))
	header := strings.Fields(strings.SplitN(b.out.String(), "\n", 2)[0])
	require.Equal(t, []string{"NAME", "QOS", "STAGE", "STATE", "DEPTH", "PEND", "STUCK", "TBDL", "DLNG", "WAIT", "HOLD", "NDLV", "DLVD", "FAIL",
		"HEAD", "HEAD", "ID", "BLOCKED", "OLDEST", "RECEIVER", "OWNER"}, header)
	require.Contains(t, b.out.String(), "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f")

	b = setupList(t, output.IDs)
	b.admin.queues = []*domain.Queue{q, {Name: "XBTI0000"}}
	require.NoError(t, queue.RunList(context.Background(), b.opts))
	require.Equal(t, "XBQIORDERS_DE\nXBTI0000\n", b.out.String(), "-o ids prints queue names")

	b = setupList(t, output.JSON)
	require.NoError(t, queue.RunList(context.Background(), b.opts))
	require.Equal(t, "[]\n", b.out.String())
	require.Empty(t, b.hints, "machine formats need no hint on stderr")
}
