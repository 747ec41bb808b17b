package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/editor"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// e on a message corrects its payload, as `message edit` does: the
// current version opens in the operator's editor (tea.Exec hands it the
// terminal), and what is saved is stored as a new version once the
// dialog confirms it — replacing only the version that was read.

// editSession is one e on a message: the version read, and the file the
// editor works on.
type editSession struct {
	view    viewID
	id      string
	queue   string
	status  domain.Status
	black   bool
	version int
	old     []byte
	file    string
}

type (
	// editReadyMsg opens the editor on a session, or says why not.
	editReadyMsg struct {
		s   *editSession
		err error
	}
	// editedMsg says the editor ended; from names it.
	editedMsg struct {
		s    *editSession
		err  error
		from string
	}
)

// startEdit checks that e applies to the selection and reads the payload
// for the editor, off the UI loop.
func (m *Model) startEdit(msg tea.KeyMsg, sel []item) tea.Cmd {
	ts := targets(sel)
	switch {
	case len(ts) == 0:
		m.status = components.StatusLine{Text: msg.String() + ": does not apply in this view", Error: true}
		return nil
	case len(ts) > 1:
		m.status = components.StatusLine{Text: fmt.Sprintf("%s edits one message at a time; %d are marked", msg.String(), len(ts)), Error: true}
		return nil
	case !slices.Contains(admin.EditableStatuses, ts[0].status):
		m.status = components.StatusLine{Text: fmt.Sprintf("%s: message %s is %s; edit needs %s", msg.String(), short(ts[0].id),
			ts[0].status, domain.Alternatives(admin.EditableStatuses)), Error: true}
		return nil
	}
	if !m.mayRun(msg, "message edit") {
		return nil
	}
	t, svc, timeout, view := ts[0], m.opts.Service, m.opts.Timeout, m.view
	m.preparing = true
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cur, err := svc.Message(ctx, t.id)
		if err != nil {
			return editReadyMsg{err: err}
		}
		old, err := svc.PayloadVersion(ctx, cur.ID, cur.PayloadVersion)
		if err != nil {
			return editReadyMsg{err: err}
		}
		file, err := editor.TempFile(cur.ID, old)
		if err != nil {
			return editReadyMsg{err: err}
		}
		return editReadyMsg{s: &editSession{view: view, id: cur.ID, queue: cur.Queue, status: cur.Status, black: cur.Blacklisted,
			version: cur.PayloadVersion, old: old, file: file}}
	}
}

// openEditor hands the terminal to the editor.
func (m *Model) openEditor(s *editSession) tea.Cmd {
	cmd, from := editor.Command(os.Getenv, s.file)
	if m.opts.Editor != nil {
		cmd, from = m.opts.Editor(s.file), ""
	}
	return tea.Exec(&editorCommand{Cmd: cmd}, func(err error) tea.Msg { return editedMsg{s: s, err: err, from: from} })
}

// editorCommand runs the editor for tea.Exec, as tea.ExecProcess would,
// and returns only once the renderer's frame loop that was stopped for it
// has ended. In bubbletea v1.3.10 that loop stops its ticker a moment after
// it is told to, and if the editor returns first — one that is not
// installed, or a script — the restart's ticker.Reset can come before that
// Stop: the ticker never ticks again, and the TUI draws nothing more until
// it quits (charmbracelet/bubbletea#1778).
type editorCommand struct{ *exec.Cmd }

// renderLoop names the frame loop's function in a goroutine dump.
var renderLoop = []byte("bubbletea.(*standardRenderer).listen(")

// maxRenderLoopWait bounds the wait for the old frame loop: should a
// bubbletea without that function be built in, the editor's return waits no
// longer than this.
const maxRenderLoopWait = 2 * time.Second

func (c *editorCommand) Run() error {
	err := c.Cmd.Run()
	waitRenderLoopEnded(maxRenderLoopWait)
	return err
}

// SetStdin, SetStdout and SetStderr give the editor the terminal's streams,
// unless the command has its own.
func (c *editorCommand) SetStdin(r io.Reader) {
	if c.Stdin == nil {
		c.Stdin = r
	}
}

func (c *editorCommand) SetStdout(w io.Writer) {
	if c.Stdout == nil {
		c.Stdout = w
	}
}

func (c *editorCommand) SetStderr(w io.Writer) {
	if c.Stderr == nil {
		c.Stderr = w
	}
}

// waitRenderLoopEnded waits until no goroutine of the process runs the
// renderer's frame loop — so while the terminal is released, once the old
// loop has returned —, or until max has passed.
func waitRenderLoopEnded(max time.Duration) {
	deadline := time.Now().Add(max)
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if !bytes.Contains(buf[:n], renderLoop) || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// edited opens the dialog that stores what the editor saved, or says why
// nothing changes.
func (m *Model) edited(msg editedMsg) {
	s := msg.s
	if msg.err != nil {
		os.Remove(s.file)
		m.status = components.StatusLine{Text: editor.Failure(msg.err, msg.from), Error: true}
		return
	}
	saved, err := os.ReadFile(s.file)
	if err != nil {
		os.Remove(s.file)
		m.status = components.StatusLine{Text: "reading what the editor saved: " + err.Error() + "; nothing changed", Error: true}
		return
	}
	if bytes.Equal(saved, s.old) {
		os.Remove(s.file)
		m.status = components.StatusLine{Text: "edit cancelled: the payload is unchanged; nothing changed"}
		return
	}
	m.pending = editAction(s, saved)
}

// editAction builds the dialog that stores an edited payload: y stores it,
// r stores it and resends the message (NDLV or WAIT).
func editAction(s *editSession, saved []byte) *pendingAction {
	title := fmt.Sprintf("Store the edited payload of message %s as version %d (%s → %s)?", short(s.id), s.version+1,
		domain.FormatBytes(int64(len(s.old))), domain.FormatBytes(int64(len(saved))))
	lines := []string{fmt.Sprintf("It stays %s in %s, in its place; version %d is kept.", s.status, s.queue, s.version)}
	keys := "[y: store · n: drop the edit]"
	resendable := s.status != domain.StatusHOLD
	switch {
	case resendable && s.black:
		lines = append(lines, fmt.Sprintf("r stores it and releases the blacklisted message: %s → TBDL, crashes reset to 0.", s.status))
		keys = "[y: store · r: store and release · n: drop the edit]"
	case resendable:
		lines = append(lines, fmt.Sprintf("r stores it and resends the message: %s → TBDL.", s.status))
		keys = "[y: store · r: store and resend · n: drop the edit]"
	default:
		lines = append(lines, "It goes on when the head of its queue does.")
	}
	p := &pendingAction{command: "message edit", edit: s, resendable: resendable,
		dialog: components.Dialog{Title: title, Lines: lines, Keys: keys}}
	p.run = func(ctx context.Context, svc admin.Service) (string, error) {
		res, err := svc.EditPayload(ctx, admin.EditParams{ID: s.id, Payload: saved, Version: s.version, Resend: p.resend,
			Reason: "queuectl tui"})
		if err != nil {
			// First, where the status line has room for it.
			return "", fmt.Errorf("not stored, your edit is kept in %s: %w", s.file, err)
		}
		os.Remove(s.file)
		summary := fmt.Sprintf("stored payload version %d of %s (%s → %s)", res.Current.Version, short(s.id),
			domain.FormatBytes(res.Previous.Size), domain.FormatBytes(res.Current.Size))
		switch {
		case res.Released:
			summary += "; released, crashes reset: " + string(res.Status)
		case res.Resent:
			summary += "; resent: " + string(res.Status)
		}
		return summary, nil
	}
	return p
}
