package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args     []string
		refresh  time.Duration
		readOnly bool
	}{
		{nil, 2 * time.Second, false},
		{[]string{"--refresh", "500ms"}, 500 * time.Millisecond, false},
		{[]string{"--refresh", "0", "--read-only"}, 0, true},
	} {
		f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
		var got *Options
		cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(c.args)
		require.NoError(t, cmd.Execute(), c.args)
		require.Equal(t, c.refresh, got.Refresh, c.args)
		require.Equal(t, c.readOnly, got.ReadOnly, c.args)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--refresh", "-1s"}, {"extra"}} {
		f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
		cmd := NewCmd(f, func(context.Context, *Options) error { return nil })
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		require.ErrorIs(t, cmd.Execute(), domain.ErrInvalid, args)
	}
}

// TestNeedsTerminal: off a terminal the TUI refuses before opening the store.
func TestNeedsTerminal(t *testing.T) {
	t.Parallel()
	opened := false
	opts := &Options{
		IO:     &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Admin:  func() (admin.Service, error) { opened = true; return nil, nil },
		Config: func() (*config.Config, error) { return &config.Config{}, nil },
	}
	err := Run(context.Background(), opts)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "needs a terminal")
	require.False(t, opened)
}

func TestNodeLabel(t *testing.T) {
	t.Parallel()
	require.Equal(t, "embedded: the store /var/lib/q.db (or, while another process holds it, that process)",
		nodeLabel(&config.Config{DB: "/var/lib/q.db"}, nil))
}

// TestTarget: the header names the store, or the server, and the context
// that chose it.
func TestTarget(t *testing.T) {
	t.Parallel()
	client, err := remote.New(remote.Options{Server: "https://queuectl.example:7870"})
	require.NoError(t, err)
	prod := map[string]config.Context{"prod": {Server: "https://queuectl.example:7870"}}
	for _, c := range []struct {
		config *config.Config
		svc    admin.Service
		want   string
	}{
		{&config.Config{DB: "/var/lib/q.db"}, nil, "store /var/lib/q.db"},
		{&config.Config{Store: "postgres://app:secret@db/queuectl"}, nil, "store postgres://app:REDACTED@db/queuectl"},
		{&config.Config{ServerURL: "https://queuectl.example:7870"}, client, "server https://queuectl.example:7870"},
		{&config.Config{CurrentContext: "prod", Contexts: prod}, client, "context prod · server https://queuectl.example:7870"},
		{&config.Config{Context: "prod", Contexts: prod}, client, "context prod · server https://queuectl.example:7870"},
	} {
		require.Equal(t, c.want, target(c.config, c.svc))
	}
}
