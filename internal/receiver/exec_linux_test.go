//go:build linux

package receiver_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/receiver/receivertest"
)

// spawner is a script that starts a subshell with a sleep and a sleep of
// its own in the background, records its process group, then waits on a
// sleep: the shape of a receiver whose children would outlive it. With
// "exit" as $2 it exits at once instead, leaving its children behind. With
// a FIFO as $3 it writes a line to it once its group is recorded.
const spawner = `(sleep 300) &
sleep 300 &
cut -d' ' -f5 /proc/$$/stat > "$1"
[ "$2" = exit ] && exit 0
[ -n "$3" ] && echo ready > "$3"
sleep 300`

func readPGID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the script records its process group")
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.NotEqual(t, syscall.Getpgrp(), pgid, "the command runs in a process group of its own")
	return pgid
}

// A timeout ends the command with everything it started (§8).
func TestExecTimeoutEndsTheWholeGroup(t *testing.T) {
	t.Parallel()
	b := setupExec(t)
	pgidFile := filepath.Join(b.dir, "pgid")
	r := b.receiver(t, time.Second, b.script(t, "spawn.sh", spawner), pgidFile)
	err := deliver(t, r, message(domain.EO, "XBTO0001"), nil)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err), "%v", err)
	require.ErrorContains(t, err, "timed out after 1s")
	receivertest.RequireGroupGone(t, readPGID(t, pgidFile), 10*time.Second)
}

// A command that exits leaves nothing behind either: what it started in
// the background ends with the delivery.
func TestExecExitEndsTheWholeGroup(t *testing.T) {
	t.Parallel()
	b := setupExec(t)
	pgidFile := filepath.Join(b.dir, "pgid")
	r := b.receiver(t, time.Minute, b.script(t, "spawn.sh", spawner), pgidFile, "exit")
	require.NoError(t, deliver(t, r, message(domain.EO, "XBTO0001"), nil))
	receivertest.RequireGroupGone(t, readPGID(t, pgidFile), 10*time.Second)
}

// A delivery cancelled while it runs (serve shutting down) ends the group.
func TestExecCancelEndsTheWholeGroup(t *testing.T) {
	t.Parallel()
	b := setupExec(t)
	pgidFile, ready := filepath.Join(b.dir, "pgid"), filepath.Join(b.dir, "ready")
	require.NoError(t, unix.Mkfifo(ready, 0o600))
	r := b.receiver(t, time.Minute, b.script(t, "spawn.sh", spawner), pgidFile, "", ready)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- r.Deliver(ctx, receiver.Delivery{Message: message(domain.EO, "XBTO0001"), Attempt: 1}) }()
	// Reading the FIFO waits for the script to write it, once it has
	// recorded its group; a delivery that ends first fails the test.
	readyc := make(chan string, 1)
	go func() {
		line, _ := os.ReadFile(ready)
		readyc <- string(line)
	}()
	select {
	case line := <-readyc:
		require.Equal(t, "ready\n", line)
	case err := <-errc:
		t.Fatalf("the delivery ended before the command was under way: %v", err)
	}
	cancel()
	err := <-errc
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err), "%v", err)
	require.ErrorContains(t, err, "delivery cancelled")
	receivertest.RequireGroupGone(t, readPGID(t, pgidFile), 10*time.Second)
}

// A command that cannot be started for a passing reason — its file is open
// for writing, "text file busy" — is a transient error; the next attempt
// may well work.
//
// Not parallel: a command another test starts holds a copy of every
// descriptor open at its fork until the kernel has finished its exec, a
// moment after the fork has returned, so with commands starting around it
// the second delivery could still find the file busy after f.Close. Go runs
// sequential tests while no parallel test runs.
func TestExecTextFileBusyIsTransient(t *testing.T) {
	b := setupExec(t)
	path := b.script(t, "busy.sh", "exit 0")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	err = deliver(t, b.receiver(t, 0, path), message(domain.EO, "XBTO0001"), nil)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err), "%v", err)
	require.ErrorContains(t, err, "text file busy")
	require.NoError(t, f.Close())
	require.NoError(t, deliver(t, b.receiver(t, 0, path), message(domain.EO, "XBTO0001"), nil))
}

// The command's environment is clean (§8): serve's PATH, HOME, LANG and TZ,
// the variables named in inherit_env, its own env, and the message's
// metadata; none of serve's other variables, its secrets least of all.
// (t.Setenv: not parallel.)
func TestExecEnvironmentIsClean(t *testing.T) {
	for k, v := range map[string]string{
		"PGPASSWORD": "hunter2", "AWS_SECRET_ACCESS_KEY": "aws-secret", "API_SECRET": "s",
		"QUEUECTL_TOKEN": "serve's token", "KEEP_ME": "kept", "LANG": "de_DE.UTF-8", "TZ": "Europe/Berlin", "HOME": "/home/serve",
	} {
		t.Setenv(k, v)
	}
	b := setupExec(t)
	out := filepath.Join(b.dir, "env")
	path := b.script(t, "env.sh", `env | sort > "$1"`)
	r, err := receiver.New("ARCHIVE", config.Receiver{Type: "exec", Command: []string{path, out},
		Env: map[string]string{"MODE": "archive", "PATH": "/opt/archive/bin:/usr/bin:/bin"}, InheritEnv: []string{"KEEP_ME", "NOT_SET"}})
	require.NoError(t, err)
	m := message(domain.EO, "XBTO0001")
	require.NoError(t, deliver(t, r, m, nil))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	var names []string
	for _, kv := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	// A shell adds PWD and SHLVL (and may add _) of its own.
	names = slicesDelete(names, "PWD", "SHLVL", "_", "OLDPWD")
	require.Equal(t, []string{"HOME", "KEEP_ME", "LANG", "MODE", "PATH",
		"QUEUECTL_APP_QUEUE", "QUEUECTL_ATTEMPT", "QUEUECTL_INTERFACE", "QUEUECTL_MESSAGE_ID",
		"QUEUECTL_RECEIVER", "QUEUECTL_SENDER", "QUEUECTL_SEQ", "TZ"}, names)
	for _, want := range []string{"HOME=/home/serve\n", "KEEP_ME=kept\n", "LANG=de_DE.UTF-8\n", "TZ=Europe/Berlin\n", "MODE=archive\n",
		"PATH=/opt/archive/bin:/usr/bin:/bin\n", "QUEUECTL_MESSAGE_ID=" + m.ID + "\n"} {
		require.Contains(t, string(got), want, "the receiver's own env wins over serve's")
	}
	require.NotContains(t, string(got), "hunter2")
	require.NotContains(t, string(got), "secret")
	require.NotContains(t, string(got), "serve's token")
}

func slicesDelete(s []string, drop ...string) []string {
	out := s[:0]
	for _, v := range s {
		keep := true
		for _, d := range drop {
			keep = keep && v != d
		}
		if keep {
			out = append(out, v)
		}
	}
	return out
}

// The payload reaches the command through a file that never had a name in
// the temporary directory, so a serve killed mid-delivery leaves no file
// behind there.
func TestExecPayloadFileHasNoName(t *testing.T) {
	t.Parallel()
	b := setupExec(t)
	seen := filepath.Join(b.dir, "stdin")
	r := b.receiver(t, 0, b.script(t, "stdin.sh", `readlink /proc/$$/fd/0 > "$1"; cat > /dev/null`), seen)
	require.NoError(t, deliver(t, r, message(domain.EO, "XBTO0001"), []byte("payload")))
	got, err := os.ReadFile(seen)
	require.NoError(t, err)
	link := strings.TrimSpace(string(got))
	require.True(t, strings.HasPrefix(link, filepath.Join(os.TempDir(), "#")) && strings.HasSuffix(link, "(deleted)"),
		"stdin should be a file created without a name in %s, but is %q", os.TempDir(), link)
}
