//go:build unix

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// pgServer is a PostgreSQL server of one test's own, which the test may
// restart, pause (SIGSTOP) and resume, as an outage would: the tests of
// outages cannot do that to the server other tests share.
type pgServer struct {
	t    *testing.T
	bin  string // the directory of initdb, pg_ctl and postgres
	dir  string // the data directory
	port int
	// owner runs the server's programs: postgres refuses to run as root.
	owner *user.User
	log   string
}

// startPGServer initdbs and starts a server of the test's own on a free
// port and returns it, with a database made for the test. The test is
// skipped, saying why, unless PostgreSQL tests run here
// (QUEUECTL_TEST_PG_URL) and the server's programs are installed:
// QUEUECTL_TEST_PG_BIN, or the newest /usr/lib/postgresql/*/bin.
func startPGServer(t *testing.T) (*pgServer, string) {
	t.Helper()
	pgtest.BaseURL(t) // skips without PostgreSQL
	bin := os.Getenv("QUEUECTL_TEST_PG_BIN")
	if bin == "" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		slices.Sort(dirs)
		if len(dirs) > 0 {
			bin = dirs[len(dirs)-1]
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); bin == "" || err != nil {
		t.Skip("no PostgreSQL server programs to run a server of the test's own (set QUEUECTL_TEST_PG_BIN): " +
			"skipping the test of a database outage")
	}
	s := &pgServer{t: t, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root, and there is no postgres user to run a PostgreSQL server as: skipping the test of a database outage")
		}
		s.owner = u
	}
	// A directory the server's user can enter, whatever TMPDIR's modes.
	base, err := os.MkdirTemp("", "queuectl-outage-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	t.Cleanup(func() { os.RemoveAll(base) })
	s.dir, s.log = filepath.Join(base, "data"), filepath.Join(base, "server.log")
	require.NoError(t, os.Mkdir(s.dir, 0o700))
	s.chown(s.dir)
	require.NoError(t, os.Mkdir(filepath.Join(base, "sock"), 0o700))
	s.chown(filepath.Join(base, "sock"))
	f, err := os.Create(s.log)
	require.NoError(t, err)
	f.Close()
	s.chown(s.log)
	s.run("initdb", "-D", s.dir, "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8")
	s.port = freePort(t)
	s.start()
	t.Cleanup(func() {
		s.resume()
		_ = s.ctl("stop", "-m", "immediate")
	})
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	_, err = conn.Exec(context.Background(), `CREATE DATABASE queuectl`)
	conn.Close(context.Background())
	require.NoError(t, err)
	return s, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/queuectl?sslmode=disable", s.port)
}

// freePort finds a TCP port no one listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *pgServer) chown(path string) {
	if s.owner == nil {
		return
	}
	uid, _ := strconv.Atoi(s.owner.Uid)
	gid, _ := strconv.Atoi(s.owner.Gid)
	require.NoError(s.t, os.Chown(path, uid, gid))
}

// command runs one of the server's programs as its owner.
func (s *pgServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = filepath.Dir(s.dir)
	if s.owner != nil {
		uid, _ := strconv.Atoi(s.owner.Uid)
		gid, _ := strconv.Atoi(s.owner.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	return cmd
}

func (s *pgServer) run(name string, args ...string) {
	s.t.Helper()
	out, err := s.command(name, args...).CombinedOutput()
	require.NoError(s.t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
}

func (s *pgServer) ctl(args ...string) error {
	out, err := s.command("pg_ctl", append([]string{"-D", s.dir, "-w", "-t", "60"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// start starts the server and waits until it accepts connections. fsync is
// off — the tests crash processes, not the machine, and the operating
// system keeps what was written — but a commit is written before it is
// acknowledged, so that what a client was told committed survives.
func (s *pgServer) start() {
	s.t.Helper()
	err := s.ctl("start", "-l", s.log, "-o", fmt.Sprintf(
		"-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=100 -c fsync=off",
		s.port, filepath.Join(filepath.Dir(s.dir), "sock")))
	if err != nil {
		log, _ := os.ReadFile(s.log)
		s.t.Fatalf("%v\nthe server's log:\n%s", err, log)
	}
}

// restart stops the server as a crash would (-m immediate) and starts it
// again.
func (s *pgServer) restart() {
	s.t.Helper()
	require.NoError(s.t, s.ctl("stop", "-m", "immediate"))
	s.start()
}

// stop stops the server as a crash would.
func (s *pgServer) stop() {
	s.t.Helper()
	require.NoError(s.t, s.ctl("stop", "-m", "immediate"))
}

// postmaster is the pid of the server's main process.
func (s *pgServer) postmaster() int {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "postmaster.pid"))
	require.NoError(s.t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	require.NoError(s.t, err)
	return pid
}

// signalAll sends sig to the server: its main process and every backend.
func (s *pgServer) signalAll(sig syscall.Signal) {
	s.t.Helper()
	pm := s.postmaster()
	pids := []int{pm}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the comm may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
}

// pause stops the whole server (SIGSTOP): connections stay open, and no
// statement gets an answer — a hung database, not a refused one.
func (s *pgServer) pause() { s.signalAll(syscall.SIGSTOP) }

// resume lets a paused server go on.
func (s *pgServer) resume() { s.signalAll(syscall.SIGCONT) }

// terminateAll ends every session of the test's database but the caller's,
// as an administrator's pg_terminate_backend would.
func (s *pgServer) terminateAll(url string) int {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(s.t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(s.t, conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()) t`).Scan(&n))
	return n
}
