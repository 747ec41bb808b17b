package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/editor"
	"github.com/queuectl/queuectl/internal/output"
)

// EditOptions are the parsed flags of `message edit`.
type EditOptions struct {
	IO           *cmdutil.IOStreams
	Admin        func() (admin.Service, error)
	Format       func() (output.Format, error)
	Hintf        func(format string, args ...any)
	PayloadLimit func(ctx context.Context) (int64, error)
	// Getenv reads $VISUAL and $EDITOR; os.Getenv unless a test sets it.
	Getenv func(string) string

	ID     string
	File   string
	Resend bool
	Reason string
}

// NewEditCmd builds `message edit`.
func NewEditCmd(f *cmdutil.Factory, runF func(context.Context, *EditOptions) error) *cobra.Command {
	opts := &EditOptions{IO: f.IO, Admin: f.Admin, Format: f.Format, Hintf: f.Hintf, PayloadLimit: f.PayloadLimit,
		Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "edit ID",
		Short: "Correct the payload of an NDLV, WAIT or HOLD message (a new version; the original is kept)",
		Long: `Correct the payload of a message that a receiver rejected, instead of failing
it and asking the sender for a new one. Only an NDLV, WAIT or HOLD message can
be edited: one on its way, delivered or failed keeps its payload.

The new payload comes from --file, or from stdin; on a terminal, without
--file, the current payload opens in $VISUAL or $EDITOR (vi when neither is
set) and what is saved is the new payload. Quitting the editor without a
change changes nothing.

The new payload is stored as a new version: the earlier ones are kept
('queuectl message payload ID --version 1' shows the original). The message
stays in its queue and its place in it; its history and the audit log record
who edited it and both versions' size and SHA-256. The payload limit of a send
(engine.max_payload) applies.

An edit replaces the version it read: when someone else edited the message
meanwhile, nothing changes (exit 4) and, after an editor session, the edited
payload is kept in a file it names. --resend resends the message in the same
step (NDLV or WAIT → TBDL); a blacklisted message is then released, its
crashes reset, as 'blacklist release' does. A HOLD message goes on when the
head of its queue does, so it is edited without --resend.

Editing needs the operator role on a server.`,
		Example: `  queuectl message edit 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f
  queuectl message edit 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f --file fixed.xml --resend
  queuectl message payload 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f | sed 's/ART-1/ART-01/' |
    queuectl message edit 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f --reason "article code"`,
		Args:              cmdutil.ExactArgs(1, "ID"),
		ValidArgsFunction: f.CompleteMessageIDs(admin.EditableStatuses, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return RunEdit(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.File, "file", "", "read the new payload from this file instead of stdin or an editor")
	fl.BoolVar(&opts.Resend, "resend", false, "resend the message in the same step (NDLV or WAIT → TBDL)")
	fl.StringVar(&opts.Reason, "reason", "", "why, for the history and the audit log")
	cmdutil.Audited(cmd, string(admin.ActEdit))
	return cmd
}

// RunEdit reads the new payload — from --file, stdin or an editor — and
// stores it. The store is not held while the input or the editor is waited
// for.
func RunEdit(ctx context.Context, opts *EditOptions) error {
	format, err := opts.Format()
	if err != nil {
		return err
	}
	if err := domain.ValidID(opts.ID); err != nil {
		return err
	}
	if err := domain.ValidateReason(opts.Reason); err != nil {
		return err
	}
	p := admin.EditParams{ID: opts.ID, Resend: opts.Resend, Reason: opts.Reason}
	editor := opts.File == "" && opts.IO.StdinTTY
	if !editor {
		// Read before the service is opened: a refusal of the input is
		// then audited as the command's own (and no store is held while
		// stdin is waited for).
		limit, err := opts.PayloadLimit(ctx)
		if err != nil {
			return err
		}
		if p.Payload, err = opts.readPayload(ctx, limit); err != nil {
			return err
		}
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	var kept string // the file an editor session's payload is in
	if editor {
		var changed bool
		if p.Payload, p.Version, kept, changed, err = opts.editorSession(ctx, svc); err != nil || !changed {
			return err
		}
	}
	res, err := svc.EditPayload(ctx, p)
	if err != nil {
		if kept != "" {
			return &keptError{err: err, file: kept}
		}
		return err
	}
	if kept != "" {
		os.Remove(kept)
	}
	return output.Value(opts.IO.Out, format, res, func(w io.Writer, _ bool) error {
		return printEdit(w, res)
	}, func() []string { return []string{res.ID} })
}

func printEdit(w io.Writer, r *admin.EditResult) error {
	_, err := fmt.Fprintf(w, "message %s: payload version %d stored (%s, sha256 %s); version %d (%s, sha256 %s) is kept\n",
		r.ID, r.Current.Version, domain.FormatBytes(r.Current.Size), r.Current.SHA256,
		r.Previous.Version, domain.FormatBytes(r.Previous.Size), r.Previous.SHA256)
	switch {
	case err == nil && r.Released:
		_, err = fmt.Fprintf(w, "message %s: released from the blacklist (crashes reset) and resent, now %s\n", r.ID, r.Status)
	case err == nil && r.Resent:
		_, err = fmt.Fprintf(w, "message %s: resent, now %s\n", r.ID, r.Status)
	}
	return err
}

// readPayload reads the new payload from --file or stdin, cut off at limit.
func (opts *EditOptions) readPayload(ctx context.Context, limit int64) ([]byte, error) {
	in, what := opts.IO.In, "stdin"
	if opts.File != "" {
		f, err := os.Open(opts.File)
		if err != nil {
			return nil, domain.Invalidf("--file: %v", pathError(err))
		}
		defer f.Close()
		in, what = f, "--file "+opts.File
	}
	b, err := io.ReadAll(io.LimitReader(cmdutil.ContextReader(ctx, in), limit+1))
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("reading the payload: %w", ctx.Err())
	case err != nil:
		return nil, domain.Invalidf("reading the payload from %s: %v", what, pathError(err))
	case int64(len(b)) > limit:
		return nil, domain.Errorf(domain.ErrTooLarge, "message %s: the new payload is over %s, the limit (engine.max_payload); nothing was changed",
			opts.ID, domain.FormatBytes(limit))
	}
	return b, nil
}

// editorSession opens the message's current payload in the editor and
// returns what was saved and the version it replaces (the service checks
// its size, and audits a refusal). changed is false,
// after a hint, when nothing was changed. kept is the file the edited
// payload stays in until it is stored.
func (opts *EditOptions) editorSession(ctx context.Context, svc admin.Service) (payload []byte, version int, kept string, changed bool, err error) {
	m, err := svc.Message(ctx, opts.ID)
	if err != nil {
		return nil, 0, "", false, err
	}
	// Refused before the editor opens, and audited as the service audits it.
	if refusal := editRefusal(m, opts.Resend); refusal != nil {
		if rerr := svc.RecordRefusal(ctx, admin.Refusal{Action: string(admin.ActEdit), Targets: []string{m.ID}, Reason: refusal.Error()}); rerr != nil {
			return nil, 0, "", false, fmt.Errorf("%w (recording this refusal in the audit log failed: %v)", refusal, rerr)
		}
		return nil, 0, "", false, refusal
	}
	version = m.PayloadVersion
	old, err := svc.PayloadVersion(ctx, m.ID, version)
	if err != nil {
		return nil, 0, "", false, err
	}
	name, err := editor.TempFile(m.ID, old)
	if err != nil {
		return nil, 0, "", false, err
	}
	if err := opts.runEditor(name); err != nil {
		os.Remove(name)
		return nil, 0, "", false, err
	}
	if ctx.Err() != nil {
		os.Remove(name)
		return nil, 0, "", false, ctx.Err()
	}
	saved, err := os.ReadFile(name)
	if err != nil {
		os.Remove(name)
		return nil, 0, "", false, fmt.Errorf("reading what the editor saved: %w", err)
	}
	if bytes.Equal(saved, old) {
		os.Remove(name)
		opts.Hintf("edit cancelled: the payload is unchanged; nothing was changed")
		return nil, 0, "", false, nil
	}
	return saved, version, name, true, nil
}

// editRefusal is why a message cannot be edited as asked, or nil: the
// service's rules, checked before an editor session so that none is wasted.
func editRefusal(m *domain.Message, resend bool) error {
	if !slices.Contains(admin.EditableStatuses, m.Status) {
		return domain.Conflictf("message %s: status is %s; message edit needs %s: a message on its way, delivered or failed keeps its payload",
			m.ID, m.Status, domain.Alternatives(admin.EditableStatuses))
	}
	if resend && m.Status == domain.StatusHOLD {
		return domain.WithHint(domain.ErrConflict,
			fmt.Sprintf("message %s: status is HOLD, so it cannot be resent: it goes on when the head of its queue %s does; nothing was changed", m.ID, m.Queue),
			"edit it without --resend, then resend or fail the head ('queuectl queue show "+m.Queue+"')")
	}
	return nil
}

// runEditor runs the operator's editor on file, on the command's terminal.
func (opts *EditOptions) runEditor(file string) error {
	cmd, from := editor.Command(opts.Getenv, file)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.IO.In, opts.IO.Out, opts.IO.ErrOut
	err := cmd.Run()
	if err == nil {
		return nil
	}
	return &editorError{msg: editor.Failure(err, from),
		hint: "set $EDITOR to an editor that exits 0 once the file is saved, or give the payload with --file"}
}

// keptError is a refused edit after an editor session: its hint names the
// file the edited payload is kept in.
type keptError struct {
	err  error
	file string
}

func (e *keptError) Error() string { return e.err.Error() }
func (e *keptError) Unwrap() error { return e.err }

// Hint names the file, then the error's own hint.
func (e *keptError) Hint() string {
	h := "your edited payload is kept in " + e.file
	if more := domain.HintOf(e.err); more != "" {
		h += "; " + more
	}
	return h
}

// editorError is an editor that failed: exit 1, with a hint.
type editorError struct{ msg, hint string }

func (e *editorError) Error() string { return e.msg }

// Hint says what to do.
func (e *editorError) Hint() string { return e.hint }

// pathError drops the operation from a file error: "x.xml: no such file".
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
