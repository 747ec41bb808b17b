package eoio

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// switchAdmin records what EOIOSwitch was asked.
type switchAdmin struct {
	admin.Service
	got *admin.EOIOSwitchParams
}

func (a *switchAdmin) EOIOSwitch(_ context.Context, p admin.EOIOSwitchParams) (*admin.EOIOStatus, error) {
	a.got = &p
	if p.Queues == "100" {
		return nil, domain.Invalidf("--queues %q is out of range", p.Queues)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &admin.EOIOStatus{State: admin.EOIOStarted, Current: domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 8},
		Old: &domain.EOIOSet{Prefix: domain.PrefixXBQ}, SwitchedAt: &at, SwitchedBy: "ops",
		Draining: admin.QueueGroup{Queues: 1, Messages: 3, Names: []string{"XBQIORDERS"}}, ErrorQueues: admin.QueueGroup{Names: []string{}}}, nil
}

func TestRunSwitch(t *testing.T) {
	t.Parallel()

	a := &switchAdmin{}
	out := &bytes.Buffer{}
	var hints []string
	opts := &SwitchOptions{
		IO:     &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: io.Discard},
		Admin:  func() (admin.Service, error) { return a, nil },
		Format: func() (output.Format, error) { return output.Table, nil },
		Hintf:  func(f string, _ ...any) { hints = append(hints, f) },
	}
	err := RunSwitch(context.Background(), opts)
	require.ErrorIs(t, err, domain.ErrInvalid, "--queues is required")
	require.Nil(t, a.got, "nothing asked of the service")

	opts.Queues, opts.queuesSet = "8", true
	require.NoError(t, RunSwitch(context.Background(), opts))
	require.Equal(t, &admin.EOIOSwitchParams{Queues: "8"}, a.got)
	require.Equal(t, `switched EOIO to XB2, 8 queues per stage
State:         started
Queues:        XB2, 8 queues per stage (since 2026-03-01T12:00:00Z, by ops)
Old set:       XBQ, one queue per app queue
Draining:      1 queue, 3 messages: XBQIORDERS
Error queues:  none
`, out.String())
	require.Len(t, hints, 1)

	opts.Queues = "100"
	require.ErrorIs(t, RunSwitch(context.Background(), opts), domain.ErrInvalid)
	require.Equal(t, "100", a.got.Queues, "the service checks the number (and audits its refusal), as in remote mode")
}

func TestSwitchFlag(t *testing.T) {
	t.Parallel()

	var got *SwitchOptions
	cmd := NewSwitchCmd(&cmdutil.Factory{IO: &cmdutil.IOStreams{Out: io.Discard, ErrOut: io.Discard}},
		func(_ context.Context, o *SwitchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--queues", "0"})
	require.NoError(t, cmd.Execute())
	require.True(t, got.queuesSet, "--queues 0 is given, not missing")
	require.Equal(t, "0", got.Queues)
}

func TestGroupLine(t *testing.T) {
	t.Parallel()

	require.Equal(t, "none", groupLine(admin.QueueGroup{}))
	names := make([]string, admin.MaxGroupNames)
	for i := range names {
		names[i] = "Q"
	}
	line := groupLine(admin.QueueGroup{Queues: 25, Messages: 1, Names: names})
	require.Contains(t, line, "25 queues, 1 message: Q, Q")
	require.Contains(t, line, ", … (5 more)")
}
