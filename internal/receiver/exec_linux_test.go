//go:build linux

package receiver_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
)

// A timed-out script is killed with its children: nothing it started may
// outlive the delivery.
func TestExecTimeoutKillsTheScriptsChildren(t *testing.T) {
	t.Parallel()
	b := setupExec(t)
	pidFile := filepath.Join(b.dir, "child.pid")
	// The child sleeps in the background while the script waits for it.
	path := b.script(t, "spawn.sh", `sleep 30 & echo $! > "`+pidFile+`"; wait`)
	err := deliver(t, b.receiver(t, 200*time.Millisecond, path), message(domain.EO, "XBTO0001"), nil)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))

	raw, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	// The group was killed before Deliver returned; the child may linger
	// only as a zombie for its reaper, never as a running process.
	if err := syscall.Kill(pid, 0); err == nil {
		state, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		require.Contains(t, string(state), ") Z ", "the script's child is still running")
	}
}
