//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/receiver/receivertest"
)

// groupScript is an exec receiver whose children would outlive it: a
// subshell with a sleep and a sleep of its own in the background. It
// writes its environment to a file, then reports its process group on the
// events FIFO ($1) and waits.
const groupScript = `#!/bin/sh
(sleep 300) &
sleep 300 &
env > "$2"
exec 4<>"$1"
echo "$(cut -d' ' -f5 /proc/$$/stat)" >&4
sleep 300
`

// When serve dies by SIGKILL, alone, with a delivery in flight, the
// receiver's whole process group ends with it (§8): the keeper of the group
// outlives serve just long enough to kill it. And the receiver never saw
// serve's secrets.
func TestServeKilledLeavesNoReceiverProcess(t *testing.T) {
	t.Parallel()
	b := setupInput(t)
	events := filepath.Join(b.dir, "events")
	envFile := filepath.Join(b.dir, "receiver.env")
	script := filepath.Join(b.dir, "receiver.sh")
	require.NoError(t, os.WriteFile(script, []byte(groupScript), 0o755))
	require.NoError(t, syscall.Mkfifo(events, 0o600))
	config := filepath.Join(b.dir, "config.yaml")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`receivers:
  EX: {type: exec, command: [/bin/sh, %q, %q, %q], timeout: 5m, inherit_env: [KEEP_ME]}
`, script, events, envFile)), 0o644))
	fifo, err := os.OpenFile(events, os.O_RDWR, 0)
	require.NoError(t, err)
	defer fifo.Close()
	pgids := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(fifo)
		if sc.Scan() {
			pgids <- sc.Text()
		}
	}()

	send, _ := b.command(nil, "--config", config, "send", "--qos", "EO", "--sender", "ERP", "--receiver", "EX")
	out, err := send.Output()
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(out)), 1)

	serve, stderr := b.command(nil, "--config", config, "serve")
	serve.Env = append(serve.Env, "PGPASSWORD=hunter2", "AWS_SECRET_ACCESS_KEY=aws-secret", "KEEP_ME=kept")
	serve.SysProcAttr = serveProcAttr() // a group of its own, killed if this test dies
	require.NoError(t, serve.Start())
	t.Cleanup(func() { _ = syscall.Kill(-serve.Process.Pid, syscall.SIGKILL) })

	var pgid int
	select {
	case s := <-pgids:
		pgid, err = strconv.Atoi(s)
		require.NoError(t, err)
	case <-time.After(waitLimit):
		t.Fatalf("the receiver did not start within %s; serve's stderr:\n%s", waitLimit, stderr)
	}
	require.NotEqual(t, serve.Process.Pid, pgid, "the receiver runs in a group of its own, not serve's")
	require.NotEmpty(t, receivertest.GroupMembers(t, pgid))

	// SIGKILL for serve alone: nothing of serve can clean up after itself.
	require.NoError(t, serve.Process.Signal(syscall.SIGKILL))
	_ = serve.Wait()
	// The keeper of the group kills it once serve is gone.
	receivertest.RequireGroupGone(t, pgid, 10*time.Second)

	env, err := os.ReadFile(envFile)
	require.NoError(t, err)
	require.Contains(t, string(env), "KEEP_ME=kept\n", "inherit_env passes a variable on")
	require.NotContains(t, string(env), "hunter2")
	require.NotContains(t, string(env), "aws-secret")
	require.NotContains(t, string(env), "XDG_DATA_HOME", "only what §8 names")
}
