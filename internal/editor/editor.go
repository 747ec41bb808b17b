// Package editor runs the operator's text editor on a file, as git and
// kubectl do: $VISUAL, else $EDITOR, else vi. `message edit` and the TUI's
// e on a message both edit a payload so.
package editor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Command returns the command that edits file, and names the editor for
// messages ("$EDITOR"). The variable may hold arguments (EDITOR="code
// --wait"): a shell splits it. getenv is os.Getenv unless a test sets it.
// The command's standard streams are left for the caller to set.
func Command(getenv func(string) string, file string) (cmd *exec.Cmd, name string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	editor, name := getenv("VISUAL"), "$VISUAL"
	if editor == "" {
		editor, name = getenv("EDITOR"), "$EDITOR"
	}
	if editor == "" {
		editor, name = "vi", "vi (neither $VISUAL nor $EDITOR is set)"
	}
	return exec.Command("sh", "-c", editor+` "$@"`, editor, file), name
}

// TempFile writes payload to a new file only its user may read, for an
// editor to open, and returns its name. The caller removes it.
func TempFile(id string, payload []byte) (string, error) {
	f, err := os.CreateTemp("", "queuectl-edit-"+id+"-*.payload")
	if err != nil {
		return "", fmt.Errorf("a file for the editor: %w", err)
	}
	_, err = f.Write(payload)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("a file for the editor: %w", err)
	}
	return f.Name(), nil
}

// Failure says why an editor session changed nothing: err is what running
// the editor returned, from names it as Command does (or is empty). A
// shell's status 127 is an editor that is not installed.
func Failure(err error, from string) string {
	if from != "" {
		from = " " + from
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Sprintf("the editor%s: %v; nothing was changed", from, err)
	}
	msg := fmt.Sprintf("the editor%s exited with status %d", from, exit.ExitCode())
	if exit.ExitCode() == 127 {
		msg += " (not found)"
	}
	return msg + "; nothing was changed"
}
