package receiver_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
)

// dirNames lists the names in dir, hidden ones included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestFileWritesThePayloadAtomically(t *testing.T) {
	t.Parallel()

	dir := filepath.Join(t.TempDir(), "spool", "out") // created on first use
	r, err := receiver.New("DROPBOX", config.Receiver{Type: "file", Dir: dir})
	require.NoError(t, err)

	payloads := [][]byte{[]byte("first\x00\xff"), {}, bytes.Repeat([]byte("0123456789"), 100_000)}
	var ids []string
	for _, p := range payloads {
		m := message(domain.EO, "XBTO0002")
		require.NoError(t, deliver(t, r, m, p))
		ids = append(ids, m.ID)
	}
	for i, id := range ids {
		got, err := os.ReadFile(filepath.Join(dir, id))
		require.NoError(t, err)
		require.True(t, bytes.Equal(payloads[i], got), "payload %d byte for byte", i)
	}
	require.ElementsMatch(t, ids, dirNames(t, dir), "no temporary files are left behind")
}

func TestFileRedeliveryReplacesTheFile(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	r, err := receiver.New("DROPBOX", config.Receiver{Type: "file", Dir: dir})
	require.NoError(t, err)

	// At-least-once: a crash after the write redelivers the same id.
	m := message(domain.EO, "XBTO0002")
	require.NoError(t, deliver(t, r, m, []byte("a longer first version")))
	require.NoError(t, deliver(t, r, m, []byte("second")))
	got, err := os.ReadFile(filepath.Join(dir, m.ID))
	require.NoError(t, err)
	require.Equal(t, "second", string(got))
	require.Equal(t, []string{m.ID}, dirNames(t, dir))
}

func TestFileFailuresAreTransient(t *testing.T) {
	t.Parallel()

	// The directory's place is taken by a file: an operator fixes that, then
	// the retry works.
	blocker := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	r, err := receiver.New("DROPBOX", config.Receiver{Type: "file", Dir: blocker})
	require.NoError(t, err)
	err = deliver(t, r, message(domain.EO, "XBTO0002"), []byte("x"))
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.Contains(t, err.Error(), "receiver DROPBOX")

	require.NoError(t, os.Remove(blocker))
	require.NoError(t, deliver(t, r, message(domain.EO, "XBTO0002"), []byte("x")))
}

func TestFileCancelledDeliveryWritesNothing(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	r, err := receiver.New("DROPBOX", config.Receiver{Type: "file", Dir: dir})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = r.Deliver(ctx, receiver.Delivery{Message: message(domain.EO, "XBTO0002"), Payload: []byte("x"), Attempt: 1})
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.Empty(t, dirNames(t, dir))
}

// A temporary file that a crashed serve left behind is removed when the
// receiver is built again (at serve's start); one that may still be being
// written, by another node, is kept, and so is everything else.
func TestFileRemovesStaleTemporaryFiles(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	write := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o644))
		at := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(p, at, at))
	}
	write(".queuectl-123.tmp", 2*time.Hour)
	write(".queuectl-456.tmp", time.Minute)
	write("0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", 48*time.Hour)
	write(".other.tmp", 48*time.Hour)
	_, err := receiver.New("DROPBOX", config.Receiver{Type: "file", Dir: dir})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{".queuectl-456.tmp", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", ".other.tmp"}, dirNames(t, dir))
}
