//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// The README's pipes, `queuectl blacklist list -o ids | queuectl blacklist
// release -` and `queuectl queue list -o ids | queuectl queue stop -`, run
// here as real processes joined by a real pipe: the two ends contend for the
// store, and neither may hold it while it waits for the other.

// pipeBundle is a store of blacklisted messages in queues of their own.
type pipeBundle struct {
	bin string
	db  string
	env []string
}

func setupPipe(t *testing.T) *pipeBundle {
	t.Helper()
	bin, err := exec.LookPath("queuectl")
	require.NoError(t, err, "TestMain puts queuectl on PATH")
	dir := t.TempDir()
	return &pipeBundle{bin: bin, db: filepath.Join(dir, "queuectl.db"),
		env: append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"),
			"XDG_DATA_HOME="+filepath.Join(dir, ".data"), "NO_COLOR=1",
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))}
}

// blacklist stores n blacklisted NDLV messages spread over queues EO
// outbound queues; with n 0, it blacklists again those that a release made
// TBDL, as crash recovery would.
func (b *pipeBundle) blacklist(t *testing.T, n, queues int) {
	t.Helper()
	st, err := bolt.Open(b.db, bolt.Options{Timeout: 10 * time.Second, NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	ctx := context.Background()
	var released []string
	require.NoError(t, st.View(ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusTBDL}}, func(m *domain.Message) error {
			released = append(released, m.ID)
			return nil
		})
	}))
	crash := func(m *domain.Message) {
		m.Crashes, m.Blacklisted, m.Node = 2, true, "node-a"
		m.Error, m.ErrorClass = "blacklisted: the engine process died 2 times while delivering it", domain.ErrorCrash
	}
	if n == 0 {
		require.NoError(t, st.Update(ctx, func(w store.Writer) error {
			for _, id := range released {
				if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL},
					To: domain.StatusNDLV, Update: crash, History: domain.HistoryEntry{Actor: "engine"}}); err != nil {
					return err
				}
			}
			return nil
		}))
		return
	}
	for start := 0; start < n; start += 10_000 {
		require.NoError(t, st.Update(ctx, func(w store.Writer) error {
			for i := start; i < min(start+10_000, n); i++ {
				m := &domain.Message{ID: uuid.Must(uuid.NewV7()).String(), QoS: domain.EO, Sender: "ERP",
					Receiver: "WMS", Queue: fmt.Sprintf("XBTO2107%04d", i%queues), Stage: domain.Outbound,
					Status: domain.StatusNDLV, Attempts: 2}
				crash(m)
				if err := w.Insert(m, []byte("x"), domain.HistoryEntry{Actor: "engine"}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// pipeRun is what the two ends of a pipe did.
type pipeRun struct {
	leftCode, rightCode int
	stdout, stderr      string
}

// pipe runs `queuectl left... | queuectl right...` and waits for both.
func (b *pipeBundle) pipe(t *testing.T, left, right []string) pipeRun {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	var out, lerrOut, rerrOut bytes.Buffer
	l := exec.Command(b.bin, append([]string{"--db", b.db}, left...)...)
	l.Env, l.Stdout, l.Stderr = b.env, w, &lerrOut
	rt := exec.Command(b.bin, append([]string{"--db", b.db}, right...)...)
	rt.Env, rt.Stdin, rt.Stdout, rt.Stderr = b.env, r, &out, &rerrOut
	require.NoError(t, l.Start())
	require.NoError(t, rt.Start())
	// Only the children hold the pipe's ends now: the reader sees the end
	// of its input when the writer exits.
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())
	lerr, rerr := l.Wait(), rt.Wait()
	return pipeRun{leftCode: exitCode(t, lerr), rightCode: exitCode(t, rerr), stdout: out.String(),
		stderr: lerrOut.String() + rerrOut.String()}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "%v", err)
	return ee.ExitCode()
}

// run runs one queuectl command to its end and returns its stdout.
func (b *pipeBundle) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(b.bin, append([]string{"--db", b.db}, args...)...)
	cmd.Env = b.env
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	require.NoError(t, err, "queuectl %s: %s", strings.Join(args, " "), errOut.String())
	return string(out)
}

// requirePipes runs both README pipes, each 20 times, on a store of
// messages blacklisted messages in queues queues, and requires every run to
// change everything it was given, with no word on stderr.
func requirePipes(t *testing.T, b *pipeBundle, messages, queues int) {
	t.Helper()
	for i := range 20 {
		if i > 0 {
			b.blacklist(t, 0, 0)
		}
		res := b.pipe(t, []string{"blacklist", "list", "-o", "ids"}, []string{"blacklist", "release", "-"})
		require.Equal(t, pipeRun{stdout: fmt.Sprintf("changed %d: release blacklisted NDLV → TBDL, crashes reset\n", messages)}, res,
			"run %d of blacklist list | blacklist release -", i+1)

		res = b.pipe(t, []string{"queue", "list", "-o", "ids"}, []string{"queue", "stop", "-"})
		require.Equal(t, pipeRun{stdout: fmt.Sprintf("changed %d: stop delivering → STOPPED\n", queues)}, res,
			"run %d of queue list | queue stop -", i+1)
		res = b.pipe(t, []string{"queue", "list", "--state", "STOPPED", "-o", "ids"}, []string{"queue", "start", "-"})
		require.Equal(t, pipeRun{stdout: fmt.Sprintf("changed %d: start STOPPED → delivering\n", queues)}, res,
			"run %d of queue list --state STOPPED | queue start -", i+1)
	}
	require.NoFileExists(t, b.db+".sock", "no process holds the store after the pipes")
}

// TestREADMEPipes runs the pipes 20 times each on a store no server holds.
func TestREADMEPipes(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	b.blacklist(t, 90, 30)
	requirePipes(t, b, 90, 30)
}

// TestPipeOfHundredThousandIDs: far more ids than a pipe buffer holds. A
// list that kept the store while its output pipe was full, and a release
// that waited for the store before it read its input, would deadlock; a
// list that stopped at a page would pass on part of the list in silence.
func TestPipeOfHundredThousandIDs(t *testing.T) {
	t.Parallel()
	const n = 100_000
	b := setupPipe(t)
	b.blacklist(t, n, 64)
	res := b.pipe(t, []string{"blacklist", "list", "-o", "ids", "--limit", "0"}, []string{"blacklist", "release", "-"})
	require.Equal(t, pipeRun{stdout: "changed 100,000: release blacklisted NDLV → TBDL, crashes reset\n"}, res)
	require.Equal(t, "", b.run(t, "blacklist", "list", "-o", "ids"), "every one was released")

}

// TestPipeSaysWhenTheListIsCut: the default --limit cuts a list at 100; a
// pipe passes on that page and stderr says that there is more.
func TestPipeSaysWhenTheListIsCut(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	b.blacklist(t, 150, 4)
	res := b.pipe(t, []string{"blacklist", "list", "-o", "ids"}, []string{"blacklist", "release", "-"})
	require.Zero(t, res.leftCode)
	require.Zero(t, res.rightCode)
	require.Equal(t, "changed 100: release blacklisted NDLV → TBDL, crashes reset\n", res.stdout)
	require.Regexp(t, `\Aqueuectl: showing the first 100; next page: --after [0-9a-f-]{36} \(or --limit 0 for all\)\n\z`, res.stderr)
}

// TestREADMEPipesWithServe runs the pipes while serve holds the store:
// both ends go through its socket.
func TestREADMEPipesWithServe(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	b.blacklist(t, 40, 8)

	serve := exec.Command(b.bin, "--db", b.db, "serve")
	serve.Env = b.env
	logs, err := serve.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
	})
	// serve says when it listens on the socket.
	sc := bufio.NewScanner(logs)
	for sc.Scan() && !strings.Contains(sc.Text(), `msg="api listening"`) {
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	require.FileExists(t, b.db+".sock")

	res := b.pipe(t, []string{"blacklist", "list", "-o", "ids"}, []string{"blacklist", "release", "-"})
	require.Equal(t, pipeRun{stdout: "changed 40: release blacklisted NDLV → TBDL, crashes reset\n"}, res)
	for i := range 20 {
		res = b.pipe(t, []string{"queue", "list", "-o", "ids"}, []string{"queue", "stop", "-"})
		require.Equal(t, pipeRun{stdout: "changed 8: stop delivering → STOPPED\n"}, res, "run %d", i+1)
		res = b.pipe(t, []string{"queue", "list", "--state", "STOPPED", "-o", "ids"}, []string{"queue", "start", "-"})
		require.Equal(t, pipeRun{stdout: "changed 8: start STOPPED → delivering\n"}, res, "run %d", i+1)
	}
}
