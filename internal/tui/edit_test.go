package tui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// fakeEditor writes a shell script that stands in for an editor — a real
// process, which the TUI runs as it runs $EDITOR — and returns the
// Options.Editor that runs it. The script writes payload to the file it
// is given, or, when payload is empty, leaves the file as it is.
//
// The tests that run an editor are not parallel: the TUI waits after the
// editor until no renderer frame loop runs in the process (editorCommand),
// which another test's program would hold up.
func fakeEditor(t *testing.T, payload string) func(file string) *exec.Cmd {
	t.Helper()
	script := filepath.Join(t.TempDir(), "editor.sh")
	body := "#!/bin/sh\n"
	if payload != "" {
		require.NotContains(t, payload, "'")
		body += "printf '%s' '" + payload + "' > \"$1\"\n"
	}
	require.NoError(t, os.WriteFile(script, []byte(body), 0o644))
	return func(file string) *exec.Cmd {
		// sh reads the script, which is not executed itself: a file just
		// written can be "text file busy" to exec while another test's
		// fork still holds it open.
		cmd := exec.Command("/bin/sh", script, file)
		cmd.Stdin = strings.NewReader("") // the test's keys are the TUI's, not the editor's
		return cmd
	}
}

// TestRenderLoopIsFound: the frame loop editorCommand waits for is the
// one the bubbletea built in runs — were it renamed, the wait would end at
// once and the workaround with it.
func TestRenderLoopIsFound(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	tm := start(t, options(b.svc), 120, 24)
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	require.Contains(t, string(buf[:n]), string(renderLoop))
	finish(t, tm)
}

// TestEditPayload: e on the blocked head opens its payload in the editor;
// r in the dialog stores what the editor saved as version 2 and resends
// the head, so the queue goes on. The original stays version 1.
func TestEditPayload(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	opts := options(b.svc)
	opts.Editor = fakeEditor(t, `{"invoice":1,"currency":"EUR"}`)
	tm := start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "as version 2 (13B → 30B)?", "r: store and resend")
	m := finish(t, tm)
	teatest.RequireEqualOutput(t, []byte(b.scrub(m.View())))

	tm = start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "r: store and resend")
	press(tm, "r")
	waitFor(t, tm, "stored payload version 2 of", "resent: TBDL")
	finish(t, tm)

	ctx := context.Background()
	p, err := b.svc.Payload(ctx, b.head)
	require.NoError(t, err)
	require.Equal(t, `{"invoice":1,"currency":"EUR"}`, string(p))
	p, err = b.svc.PayloadVersion(ctx, b.head, 1)
	require.NoError(t, err)
	require.Equal(t, `{"invoice":1}`, string(p))
	head, err := b.svc.Message(ctx, b.head)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, head.Status)
	require.Equal(t, 2, head.PayloadVersion)
	for _, id := range b.behind {
		msg, err := b.svc.Message(ctx, id)
		require.NoError(t, err)
		require.Equal(t, domain.StatusTBDL, msg.Status, "message %s behind the corrected head", id)
	}
	var edits []*domain.AuditEntry
	for _, e := range auditLog(t, b) {
		if e.Action == string(admin.ActEdit) {
			edits = append(edits, e)
		}
	}
	require.Len(t, edits, 1)
	require.Equal(t, domain.AuditOK, edits[0].Result)
	require.Contains(t, edits[0].Detail, "; resent; reason: queuectl tui")
}

// TestEditPayloadStoreOnly: y stores the edit of a HOLD message, from its
// detail view, without resending it; its queue stays blocked.
func TestEditPayloadStoreOnly(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	opts := options(b.svc)
	opts.Editor = fakeEditor(t, `{"invoice":2,"currency":"EUR"}`)
	tm := start(t, opts, 120, 24)
	press(tm, "enter")
	waitFor(t, tm, "HOLD")
	press(tm, "j", "enter")
	waitFor(t, tm, "History")
	press(tm, "e")
	waitFor(t, tm, "It goes on when the head of its queue does.", "[y: store · n: drop the edit]")
	press(tm, "r") // no resend for a HOLD message
	press(tm, "y")
	waitFor(t, tm, "stored payload version 2 of")
	finish(t, tm)
	msg, err := b.svc.Message(context.Background(), b.behind[0])
	require.NoError(t, err)
	require.Equal(t, domain.StatusHOLD, msg.Status)
	require.Equal(t, 2, msg.PayloadVersion)
}

// TestEditPayloadChangesNothing: an editor that saves nothing new, one
// that is not found, a dialog answered n, and a message e does not apply
// to change nothing.
func TestEditPayloadChangesNothing(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	opts := options(b.svc)
	opts.Editor = fakeEditor(t, "")
	tm := start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "edit cancelled: the payload is unchanged; nothing changed")
	finish(t, tm)

	opts.Editor = func(file string) *exec.Cmd { return exec.Command("/bin/sh", "-c", "exit 127") }
	tm = start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "the editor exited with status 127 (not found); nothing was changed")
	finish(t, tm)

	opts.Editor = fakeEditor(t, "changed")
	tm = start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "as version 2")
	press(tm, "n")
	waitFor(t, tm, "cancelled; nothing changed")
	finish(t, tm)

	head, err := b.svc.Message(context.Background(), b.head)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNDLV, head.Status)
	require.Equal(t, 1, head.PayloadVersion, "nothing was stored")
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), "queuectl-edit-"+b.head+"-*"))
	require.NoError(t, err)
	require.Empty(t, matches, "a dropped edit leaves no file behind")
}

// TestEditPayloadOverTheAPI: an operator's token edits through the server;
// an edit that another came before is refused, and the dialog's edit is
// kept in its file. A monitor's TUI offers no e.
func TestEditPayloadOverTheAPI(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	opts := remoteOptions(t, b, "operator")
	editor := fakeEditor(t, `{"invoice":1,"currency":"CHF"}`)
	opts.Editor = func(file string) *exec.Cmd {
		// While the editor is open, someone else corrects the message.
		_, err := b.svc.EditPayload(context.Background(), admin.EditParams{ID: b.head, Payload: []byte(`{"invoice":1,"currency":"EUR"}`)})
		require.NoError(t, err)
		return editor(file)
	}
	tm := start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "as version 2")
	press(tm, "y")
	waitFor(t, tm, "not stored, your edit is kept in")
	m := finish(t, tm)
	require.Contains(t, m.status.Text, "someone edited it meanwhile")
	file, _, _ := strings.Cut(strings.TrimPrefix(m.status.Text, "not stored, your edit is kept in "), ": ")
	kept, err := os.ReadFile(file)
	require.NoError(t, err, "the edit is kept in %s", file)
	require.Equal(t, `{"invoice":1,"currency":"CHF"}`, string(kept))
	require.NoError(t, os.Remove(file))
	p, err := b.svc.Payload(context.Background(), b.head)
	require.NoError(t, err)
	require.Equal(t, `{"invoice":1,"currency":"EUR"}`, string(p), "the other edit stands")

	opts = remoteOptions(t, b, "monitor")
	opts.Editor = editor
	tm = start(t, opts, 120, 24)
	press(tm, "2")
	waitFor(t, tm, "BEHIND")
	press(tm, "e")
	waitFor(t, tm, "read-only: actions are off")
	finish(t, tm)
}

// TestEditPayloadReleasesBlacklisted: e in the Blacklist view corrects the
// poison message; r stores the edit and releases it, as the dialog says:
// crashes reset.
func TestEditPayloadReleasesBlacklisted(t *testing.T) {
	// Not parallel: see fakeEditor.
	b := setup(t)
	opts := options(b.svc)
	opts.Editor = fakeEditor(t, "order, not poison")
	tm := start(t, opts, 120, 24)
	press(tm, "3")
	waitFor(t, tm, "CRASHES")
	press(tm, "e")
	waitFor(t, tm, "releases the blacklisted message: NDLV → TBDL, crashes reset to 0.", "r: store and release")
	press(tm, "r")
	waitFor(t, tm, "released, crashes reset: TBDL")
	finish(t, tm)
	m, err := b.svc.Message(context.Background(), b.ids[4])
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Crashes)
	require.Equal(t, 2, m.PayloadVersion)
}
