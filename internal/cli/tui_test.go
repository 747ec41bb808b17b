package cli_test

import (
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// runOnTerminal runs one command line as on a terminal, with q typed, so
// that a TUI that starts quits at once.
func (b *testBundle) runOnTerminal(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader("q"), Out: &out, ErrOut: &errOut,
		StdinTTY: true, StdoutTTY: true, StderrTTY: true})
	code := cli.Run(context.Background(), f, append([]string{"--config", b.config}, args...))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// tokenServer serves the API over a store with one token of each role
// given, named ops-ROLE, whose token is tok-ROLE.
func tokenServer(t *testing.T, roles ...string) string {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	var tokens []config.Token
	for _, r := range roles {
		tokens = append(tokens, config.Token{Name: "ops-" + r, Role: r, SHA256: httpapi.HashToken("tok-" + r)})
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Options{Service: svc, Auditor: svc, Tokens: tokens}).Handler(false))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTUIExitsWhenItCannotWork: a TUI whose server cannot be reached, or
// refuses its token, exits as any command would — 6 or 7, with the same
// message — instead of waiting at "loading…"; so does a producer's token,
// which may not read queues.
func TestTUIExitsWhenItCannotWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	up := tokenServer(t, "producer", "monitor")

	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"unreachable", []string{"--server", down}, cli.ExitUnavailable},
		{"no token", []string{"--server", up}, cli.ExitDenied},
		{"unknown token", []string{"--server", up, "--token", "tok-nobody"}, cli.ExitDenied},
	} {
		want := b.runOnTerminal(t, append(c.args, "queue", "list")...)
		require.Equal(t, c.code, want.code, "%s: queue list: %s", c.name, want.stderr)
		got := b.runOnTerminal(t, append(c.args, "tui")...)
		require.Equal(t, c.code, got.code, "%s: %s", c.name, got.stderr)
		require.Equal(t, want.stderr, got.stderr, c.name)
		require.Empty(t, got.stdout, "%s: the TUI never started", c.name)
	}

	got := b.runOnTerminal(t, "--server", up, "--token", "tok-producer", "tui")
	require.Equal(t, cli.ExitDenied, got.code, got.stderr)
	require.Contains(t, got.stderr, "queuectl: token ops-producer (role producer) may not read queues, which the TUI shows: "+
		"it needs role monitor, operator or admin\n")
	require.Empty(t, got.stdout)

	got = b.runOnTerminal(t, "--server", up, "--token", "tok-monitor", "tui")
	require.Equal(t, cli.ExitOK, got.code, "a monitor's TUI starts (and q quits it): %s", got.stderr)
	require.Contains(t, got.stdout, "server "+up+" · as ops-monitor, role monitor")
}
