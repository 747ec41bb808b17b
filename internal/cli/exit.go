package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// Exit codes of §5.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitConflict    = 4
	ExitPartial     = 5
	ExitUnavailable = 6
	ExitDenied      = 7
	ExitInterrupted = 130
)

// ExitStatus is one exit status of queuectl and what it means.
type ExitStatus struct {
	Code    int
	Meaning string
}

// ExitStatuses describes the exit codes, for the man pages' EXIT STATUS.
func ExitStatuses() []ExitStatus {
	return []ExitStatus{
		{Code: ExitOK, Meaning: "success"},
		{Code: ExitError, Meaning: "an error not of the kinds below"},
		{Code: ExitUsage, Meaning: "usage error or invalid input: a bad flag, argument, value or message; nothing was changed"},
		{Code: ExitNotFound, Meaning: "not found: a message, queue or other object named does not exist"},
		{Code: ExitConflict, Meaning: "conflict: the message's status changed, or is not one the action applies to"},
		{Code: ExitPartial, Meaning: "partial: a bulk action changed some but not all of its targets"},
		{Code: ExitUnavailable, Meaning: "unavailable: the server is unreachable, the store is locked, damaged or not there, the database is down"},
		{Code: ExitDenied, Meaning: "permission denied: the server refused the token"},
		{Code: ExitInterrupted, Meaning: "interrupted (SIGINT)"},
	}
}

// ErrPartial marks a bulk action that changed some but not all of its targets.
var ErrPartial = cmdutil.ErrPartial

// ErrSilent ends a command with an exit code whose explanation the command
// has already printed.
type ErrSilent struct{ Code int }

func (e *ErrSilent) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode decides the process's exit code from the error a command returned.
// It is the only place that does.
func ExitCode(err error) int {
	var silent *ErrSilent
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &silent):
		return silent.Code
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, domain.ErrInvalid), errors.Is(err, domain.ErrTooLarge):
		return ExitUsage
	case errors.Is(err, domain.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, domain.ErrConflict):
		return ExitConflict
	case errors.Is(err, ErrPartial):
		return ExitPartial
	case errors.Is(err, domain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return ExitUnavailable
	case errors.Is(err, domain.ErrPermission):
		return ExitDenied
	}
	return ExitError
}

// PrintError writes err to w as `queuectl: <message>`, plus its hint line,
// escaped for the terminal.
func PrintError(w io.Writer, err error) {
	var silent *ErrSilent
	var printed interface{ Printed() bool }
	if errors.As(err, &silent) || errors.As(err, &printed) && printed.Printed() {
		return
	}
	// The service names a field as the API does; the CLI says its flag.
	msg := domain.RenderFields(err, domain.Flag)
	switch {
	case errors.Is(err, context.Canceled):
		msg = "interrupted"
	case errors.Is(err, context.DeadlineExceeded):
		msg = "timed out (see --timeout): " + msg
	}
	// An error may quote what a producer, a receiver or the user wrote.
	fmt.Fprintf(w, "queuectl: %s\n", output.Escape(msg))
	if hint := domain.HintOf(err); hint != "" {
		fmt.Fprintf(w, "hint: %s\n", output.Escape(hint))
	}
}
