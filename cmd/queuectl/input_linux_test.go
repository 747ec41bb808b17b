//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// inputBundle runs queuectl commands against a store of their own.
type inputBundle struct {
	bin string
	dir string
	env []string
}

func setupInput(t *testing.T) *inputBundle {
	t.Helper()
	bin, err := exec.LookPath("queuectl")
	require.NoError(t, err, "TestMain puts queuectl on PATH")
	dir := t.TempDir()
	return &inputBundle{bin: bin, dir: dir, env: append(os.Environ(), "HOME="+dir,
		"XDG_DATA_HOME="+filepath.Join(dir, ".data"), "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"),
		// Under the race detector a process waits a second before it exits.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))}
}

// makeStore creates the bundle's store, as a first tuning value does: only
// a send or a tuning value creates a store.
func (b *inputBundle) makeStore(t *testing.T) {
	t.Helper()
	cmd, stderr := b.command(nil, "tune", "set", "EO_OUTBOUND_PARALLEL", "1")
	require.NoError(t, cmd.Run(), "stderr: %s", stderr)
}

func (b *inputBundle) command(stdin *os.File, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(b.bin, append([]string{"--db", filepath.Join(b.dir, "q.db")}, args...)...)
	cmd.Env = b.env
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// waitReadingStdin waits until the process is blocked reading its stdin:
// the kernel shows one of its threads in read(0, ...). No event says so;
// this polls /proc, bounded by waitLimit.
func waitReadingStdin(t *testing.T, pid int) {
	t.Helper()
	nr, ok := map[string]string{"amd64": "0", "arm64": "63", "386": "3"}[runtime.GOARCH]
	if !ok {
		t.Skipf("the read system call's number on %s is not known to this test", runtime.GOARCH)
	}
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && strings.HasPrefix(string(b), nr+" 0x0 ") {
				return
			}
		}
		runtime.Gosched()
	}
	t.Fatalf("process %d did not start reading its stdin within %s", pid, waitLimit)
}

// waitExit waits for cmd to end, at most within, and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s still ran %s later", strings.Join(cmd.Args, " "), within)
		return -1
	}
}

// openPTY returns a new pseudo-terminal: its controller, which the test
// keeps, and its terminal end, which a command gets as stdin.
func openPTY(t *testing.T) (controller, terminal *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { ptmx.Close() })
	var n uint32
	unlock := int32(0)
	for _, c := range []struct {
		req uintptr
		arg unsafe.Pointer
	}{{syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)}, {syscall.TIOCGPTN, unsafe.Pointer(&n)}} {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), c.req, uintptr(c.arg)); e != 0 {
			t.Fatalf("pseudo-terminal: ioctl %#x: %v", c.req, e)
		}
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// A command waiting for input on a pipe or a terminal ends at once on
// SIGINT or SIGTERM, with exit 130 (§5), and does not wait for the input to
// end.
func TestWaitForInputEndsOnSignal(t *testing.T) {
	t.Parallel()
	send := []string{"send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS"}
	tests := []struct {
		name string
		args []string
		tty  bool
		sig  syscall.Signal
	}{
		{"send, pipe, SIGINT", send, false, syscall.SIGINT},
		{"send, pipe, SIGTERM", send, false, syscall.SIGTERM},
		{"send, terminal, SIGINT", send, true, syscall.SIGINT},
		{"send --jsonl, pipe, SIGINT", []string{"send", "--jsonl"}, false, syscall.SIGINT},
		{"blacklist release -, pipe, SIGINT", []string{"blacklist", "release", "-"}, false, syscall.SIGINT},
		{"blacklist release -, terminal, SIGTERM", []string{"blacklist", "release", "-"}, true, syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupInput(t)
			b.makeStore(t)
			var stdin *os.File
			if tt.tty {
				_, stdin = openPTY(t)
			} else {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				t.Cleanup(func() { w.Close() }) // open: the input never ends
				stdin = r
			}
			cmd, stderr := b.command(stdin, tt.args...)
			require.NoError(t, cmd.Start())
			stdin.Close()
			waitReadingStdin(t, cmd.Process.Pid)
			require.NoError(t, cmd.Process.Signal(tt.sig))
			require.Equal(t, 130, waitExit(t, cmd, waitLimit), "stderr: %s", stderr)
			require.Contains(t, stderr.String(), "queuectl: interrupted\n")
		})
	}
}

// --timeout bounds a wait for input too: exit 6 (§5).
func TestWaitForInputEndsOnTimeout(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS", "--timeout", "1s"},
		{"blacklist", "release", "-", "--timeout", "1s"},
	} {
		b := setupInput(t)
		b.makeStore(t)
		_, tty := openPTY(t)
		cmd, stderr := b.command(tty, args...)
		require.NoError(t, cmd.Start())
		require.Equal(t, 6, waitExit(t, cmd, waitLimit), "stderr: %s", stderr)
		require.Contains(t, stderr.String(), "queuectl: timed out (see --timeout)")
	}
}

// measured wraps cmd in GNU time, which writes the peak resident memory of
// the command alone to a file. The rusage this process gets back from a
// child cannot say it: on Linux a child's peak starts from the memory of
// the parent it was forked from — here the whole test binary, with every
// test it runs. It returns a function that reads the peak, or nil when GNU
// time is not there.
func measured(t *testing.T, cmd *exec.Cmd) func() int64 {
	t.Helper()
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		t.Logf("no /usr/bin/time: peak memory is not measured")
		return nil
	}
	out := filepath.Join(t.TempDir(), "peak")
	cmd.Args = append([]string{timeBin, "-o", out, "-f", "%M"}, cmd.Args...)
	cmd.Path = timeBin
	return func() int64 {
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		lines := strings.Fields(string(b))
		kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
		require.NoError(t, err, "GNU time's report: %s", b)
		return kib << 10
	}
}

// A payload is read up to engine.max_payload and no further (§2): an
// endless one is refused at the limit, naming it, in bounded memory: under
// 64 MiB, the test binary (all of queuectl and its tests) included.
func TestEndlessPayloadIsCutOffAtTheLimit(t *testing.T) {
	t.Parallel()
	b := setupInput(t)
	zero, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer zero.Close()

	file, stderr := b.command(nil, "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS", "--file", "/dev/zero")
	piped, pipedErr := b.command(nil, "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	piped.Stdin = r
	// A gigabyte of zeros, as `head -c 1G /dev/zero |` gives: the writer
	// stops when queuectl closes the pipe.
	written := make(chan int64, 1)
	go func() {
		n, _ := io.CopyN(w, zero, 1<<30)
		w.Close()
		written <- n
	}()
	for _, c := range []struct {
		name   string
		cmd    *exec.Cmd
		stderr *bytes.Buffer
	}{{"--file /dev/zero", file, stderr}, {"a gigabyte on stdin", piped, pipedErr}} {
		peak := measured(t, c.cmd)
		require.NoError(t, c.cmd.Start())
		require.Equal(t, 2, waitExit(t, c.cmd, waitLimit), "stderr: %s", c.stderr)
		require.Equal(t, "queuectl: payload is over 10MiB, the limit (engine.max_payload)\n", c.stderr.String())
		if peak == nil {
			continue
		}
		rss := peak()
		t.Logf("%s: peak RSS %d MiB", c.name, rss>>20)
		if !raceEnabled {
			require.Less(t, rss, int64(64<<20), "peak RSS")
		}
	}
	r.Close()
	require.Less(t, <-written, int64(1<<30), "the payload was not read to its end")
	ids, stderr := b.command(nil, "message", "list", "-o", "ids")
	out, _ := ids.Output()
	require.Empty(t, out)
	require.Contains(t, stderr.String(), "there is no store", "nothing was stored, not even a store")
}
