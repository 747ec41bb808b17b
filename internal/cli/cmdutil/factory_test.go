package cmdutil_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

func TestStorePath(t *testing.T) {
	t.Parallel()

	tests := []struct {
		db, store, want string
	}{
		{"/var/lib/q.db", "", "/var/lib/q.db"},
		{"/var/lib/q.db", "bolt:///srv/queuectl/q.db", "/srv/queuectl/q.db"},
		{"", "bolt://data/q.db", filepath.Join("data", "q.db")},
		{"", "bolt://q.db", "q.db"},
	}
	for _, tt := range tests {
		got, err := cmdutil.StorePath(&config.Config{DB: tt.db, Store: tt.store})
		require.NoError(t, err, tt.store)
		require.Equal(t, tt.want, got, tt.store)
	}

	bad := []struct {
		store, want string
	}{
		{"bolt://", "names no file"},
		{"bolt:", "names no file"},
		{"postgres://queuectl:s3cret@db.example:5432/queuectl", `the store postgres://queuectl:REDACTED@db.example:5432/queuectl is a PostgreSQL database; this command works on a bolt store file`},
		{"postgres://db.example/queuectl?password=s3cret", `password=REDACTED`},
		{"mysql://db.example/q", `scheme "mysql" is not supported`},
		{"mysql://queuectl:s3cret@db.example/q", `mysql://queuectl:REDACTED@db.example/q`},
		{"postgres://queuectl:s3%cret@db.example/queuectl", "malformed"},
	}
	for _, tt := range bad {
		_, err := cmdutil.StorePath(&config.Config{DB: "/var/lib/q.db", Store: tt.store})
		require.ErrorIs(t, err, domain.ErrInvalid, tt.store)
		require.ErrorContains(t, err, tt.want, tt.store)
		require.NotContains(t, err.Error(), "s3cret", "the password never shows")
		require.NotContains(t, err.Error(), "s3%cret", "the password never shows")
	}
}

type factoryBundle struct {
	f      *cmdutil.Factory
	flags  *pflag.FlagSet
	dir    string
	stderr *bytes.Buffer
}

func setupFactory(t *testing.T, args ...string) *factoryBundle {
	t.Helper()
	b := &factoryBundle{dir: t.TempDir(), stderr: &bytes.Buffer{}}
	cfg := filepath.Join(b.dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfg, nil, 0o600))
	b.flags = pflag.NewFlagSet("queuectl", pflag.ContinueOnError)
	b.flags.String("db", "", "")
	b.flags.String("store", "", "")
	b.flags.String("config", "", "")
	b.flags.StringP("output", "o", "table", "")
	b.flags.BoolP("quiet", "q", false, "")
	require.NoError(t, b.flags.Parse(append([]string{"--config", cfg, "--db", filepath.Join(b.dir, "q.db")}, args...)))
	b.f = cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: b.stderr})
	b.f.GlobalFlags = b.flags
	t.Cleanup(func() { require.NoError(t, b.f.Close()) })
	return b
}

func TestFactoryFormat(t *testing.T) {
	t.Parallel()

	b := setupFactory(t, "-o", "JSONL")
	f, err := b.f.Format()
	require.NoError(t, err)
	require.Equal(t, output.JSONL, f)

	b = setupFactory(t, "-o", "xml")
	_, err = b.f.Format()
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `"xml"`)
}

func TestFactoryHintf(t *testing.T) {
	t.Parallel()

	b := setupFactory(t)
	b.f.Hintf("no queues match %s", "XBQ*")
	require.Equal(t, "queuectl: no queues match XBQ*\n", b.stderr.String())

	b = setupFactory(t, "--quiet")
	b.f.Hintf("no queues match")
	require.Empty(t, b.stderr.String(), "--quiet silences hints")
}

func TestFactoryAdminOpensOnce(t *testing.T) {
	t.Parallel()

	b := setupFactory(t)
	b.f.CreateStore = true
	s1, err := b.f.Admin()
	require.NoError(t, err)
	s2, err := b.f.Admin()
	require.NoError(t, err)
	require.Same(t, s1, s2)
	require.NoFileExists(t, filepath.Join(b.dir, "q.db"), "nothing is opened before a call needs the store")
	_, err = s1.Tuning(context.Background())
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(b.dir, "q.db"))
	require.NoFileExists(t, filepath.Join(b.dir, "q.db.sock"), "nor held after it")
}

// A command that does not create the store (all but send and tune) is
// refused a store that is not there, with exit 6, and makes neither the
// file nor its directories.
func TestFactoryAdminDoesNotCreateAStore(t *testing.T) {
	t.Parallel()

	list := func(b *factoryBundle) error {
		svc, err := b.f.Admin()
		require.NoError(t, err, "the embedded service opens the store at its first call")
		return svc.Queues(context.Background(), admin.QueueFilter{}, func(*domain.Queue) error { return nil })
	}
	b := setupFactory(t)
	err := list(b)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "there is no store at "+filepath.Join(b.dir, "q.db"))
	require.NoFileExists(t, filepath.Join(b.dir, "q.db"))

	dir := t.TempDir()
	b = setupFactory(t, "--db", filepath.Join(dir, "missing", "dir", "q.db"))
	require.ErrorIs(t, list(b), domain.ErrUnavailable)
	require.NoDirExists(t, filepath.Join(dir, "missing"))
}

func TestFactoryAdminOnPostgres(t *testing.T) {
	t.Parallel()

	u := pgtest.URL(t)
	ctx := context.Background()
	b := setupFactory(t, "--store", u)
	_, err := b.f.Admin()
	require.ErrorIs(t, err, domain.ErrUnavailable, "a database without the schema")
	require.Contains(t, domain.HintOf(err), "queuectl migrate")

	_, err = postgres.Migrate(ctx, u)
	require.NoError(t, err)
	b = setupFactory(t, "--store", u)
	svc, err := b.f.Admin()
	require.NoError(t, err)
	msgs, err := svc.Send(ctx, []domain.SendRequest{{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("x")}})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.NoFileExists(t, filepath.Join(b.dir, "q.db"), "--store wins over --db")
}

func TestFactoryAdminPostgresUnreachable(t *testing.T) {
	t.Parallel()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	b := setupFactory(t, "--store", fmt.Sprintf("postgres://queuectl:s3cret@127.0.0.1:%d/queuectl", port))
	_, err = b.f.Admin()
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "connection refused")
	require.NotContains(t, err.Error(), "s3cret")
}
