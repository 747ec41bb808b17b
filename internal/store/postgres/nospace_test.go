package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// A write the database refuses because its disk is full (SQLSTATE 53100)
// is unavailable — the CLI's exit 6 — and no-space, which the API answers
// 507; nothing of it is written. The schema's tables live in a tablespace
// on a small file system of the test's, so the database server must run on
// this machine and the test as root (else it skips).
func TestFullDiskIsNoSpace(t *testing.T) {
	t.Parallel()
	base := pgtest.BaseURL(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system to fill needs root")
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("no postgres user to own the tablespace: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(dir, 0o700))
	if out, err := osexec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system to fill: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := osexec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	require.NoError(t, os.Chown(dir, uid, gid))
	// The server's user must reach the directory: open the test's own
	// temporary directories to it (they hold nothing else).
	for d := filepath.Dir(dir); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}

	conn, err := pgx.Connect(t.Context(), base)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, conn.Close(context.Background())) })
	space := fmt.Sprintf("qt_full_%d", os.Getpid())
	if _, err := conn.Exec(t.Context(), fmt.Sprintf(`CREATE TABLESPACE %s LOCATION '%s'`, space, dir)); err != nil {
		t.Skipf("the database server cannot make a tablespace of %s (not on this machine?): %v", dir, err)
	}
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), `DROP TABLESPACE `+space)
		require.NoError(t, err)
	})
	// Registered after the tablespace's drop, so it runs before it.
	url := pgtest.URL(t) + "&default_tablespace=" + space
	if !strings.Contains(url, "?") {
		url = strings.Replace(url, "&", "?", 1)
	}
	st, err := postgres.Open(t.Context(), url, postgres.Options{Migrate: true, MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	svc := local.New(st, local.Options{Role: domain.RoleCentral, Actor: "test"})

	payload := make([]byte, 256<<10)
	sent := 0
	for range 100 {
		// Random bytes do not compress: each payload takes its size.
		_, _ = rand.Read(payload)
		_, err = svc.Send(t.Context(), []domain.SendRequest{{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"},
			Interface: "Test", Payload: payload}})
		if err != nil {
			break
		}
		sent++
	}
	require.Error(t, err, "100 payloads of 256 KiB fit in 4 MiB")
	require.ErrorIs(t, err, domain.ErrNoSpace, "%v", err)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.Contains(t, err.Error(), "its disk is full")

	var n int
	require.NoError(t, st.View(t.Context(), func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(*domain.Message) error { n++; return nil })
	}))
	require.Equal(t, sent, n, "nothing of the refused send was written")
}
