package receiver_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
)

type execBundle struct {
	dir string // where scripts live and write what they saw
}

func setupExec(t *testing.T) *execBundle {
	t.Helper()
	return &execBundle{dir: t.TempDir()}
}

// script writes an executable shell script and returns its path.
func (b *execBundle) script(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(b.dir, name)
	require.NoError(t, receiver.WriteExecutable(path, []byte("#!/bin/sh\n"+body+"\n")))
	return path
}

func (b *execBundle) receiver(t *testing.T, timeout time.Duration, command ...string) receiver.Receiver {
	t.Helper()
	r, err := receiver.New("ARCHIVE", config.Receiver{Type: "exec", Command: command, Timeout: timeout})
	require.NoError(t, err)
	return r
}

func TestExecExitZeroIsDelivered(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	r := b.receiver(t, 0, b.script(t, "ok.sh", "cat >/dev/null; exit 0"))
	require.NoError(t, deliver(t, r, message(domain.EO, "XBTO0001"), []byte("payload")))
}

func TestExecExitClasses(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	tests := []struct {
		name, body string
		class      domain.ErrorClass
		text       string
	}{
		{"EX_TEMPFAIL", "echo 'queue full' >&2; exit 75", domain.ErrorTransient,
			"exited 75 (temporary failure): queue full"},
		{"other exit", "printf 'starting\\nchecking\\nschema mismatch in line 3\\n' >&2; exit 3", domain.ErrorPermanent,
			"exited 3: schema mismatch in line 3"},
		{"exit 1 without stderr", "exit 1", domain.ErrorPermanent, "exited 1"},
		{"killed by a signal", "kill -9 $$", domain.ErrorTransient, "was killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := b.script(t, strings.ReplaceAll(tt.name, " ", "_")+".sh", tt.body)
			err := deliver(t, b.receiver(t, 0, path), message(domain.EO, "XBTO0001"), nil)
			require.Error(t, err)
			require.Equal(t, tt.class, receiver.ClassOf(err))
			require.Contains(t, err.Error(), path)
			require.Contains(t, err.Error(), tt.text)
			require.NotContains(t, err.Error(), "starting", "only the last line of stderr is quoted")
		})
	}
}

func TestExecTimeoutIsTransient(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	// exec, so that the process the timeout kills is the one holding stderr.
	path := b.script(t, "slow.sh", "exec sleep 30")
	err := deliver(t, b.receiver(t, 50*time.Millisecond, path), message(domain.EO, "XBTO0001"), nil)
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.EqualError(t, err, path+": timed out after 50ms")
}

func TestExecMissingCommandIsPermanent(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	missing := filepath.Join(b.dir, "no-such-command")
	err := deliver(t, b.receiver(t, 0, missing), message(domain.EO, "XBTO0001"), nil)
	require.Error(t, err)
	require.Equal(t, domain.ErrorPermanent, receiver.ClassOf(err))
	require.Contains(t, err.Error(), missing)
}

func TestExecEnvironmentArgumentsAndStdin(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	out := filepath.Join(b.dir, "out")
	require.NoError(t, os.Mkdir(out, 0o755))
	path := b.script(t, "record.sh", `cat > "$1/stdin"
env | grep '^QUEUECTL_' | sort > "$1/env"
printf '%s' "$2" > "$1/arg2"`)
	r := b.receiver(t, 0, path, out, "--mode=archive")

	payload := []byte("line 1\nline 2\x00\xff\r\nno newline at the end")
	m := message(domain.EOIO, "XBQOE8B9ORDERS_DE")
	err := r.Deliver(context.Background(), receiver.Delivery{Message: m, Payload: payload, Attempt: 3})
	require.NoError(t, err)

	got, err := os.ReadFile(filepath.Join(out, "stdin"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(payload, got), "stdin carries the payload byte for byte")

	arg, err := os.ReadFile(filepath.Join(out, "arg2"))
	require.NoError(t, err)
	require.Equal(t, "--mode=archive", string(arg))

	env, err := os.ReadFile(filepath.Join(out, "env"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"QUEUECTL_APP_QUEUE=ORDERS_DE",
		"QUEUECTL_ATTEMPT=3",
		"QUEUECTL_INTERFACE=OrderCreate",
		"QUEUECTL_MESSAGE_ID=" + m.ID,
		"QUEUECTL_RECEIVER=WMS",
		"QUEUECTL_SENDER=ERP",
		"QUEUECTL_SEQ=42",
	}, "\n")+"\n", string(env))
}

func TestExecCancelledDeliveryIsTransient(t *testing.T) {
	t.Parallel()
	b := setupExec(t)

	path := b.script(t, "slow.sh", "exec sleep 30")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.receiver(t, 0, path).Deliver(ctx, receiver.Delivery{Message: message(domain.EO, "XBTO0001"), Attempt: 1})
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
}
