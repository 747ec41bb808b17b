// Package cmdutil holds what every command package shares: the Factory that
// opens the admin service and loads the configuration, the I/O streams,
// and flag helpers.
package cmdutil

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the streams a command may use. Commands never touch os.Stdout
// and friends directly, so tests can capture everything.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdinTTY, StdoutTTY and StderrTTY say whether the streams are terminals.
	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool
}

// System returns the process's own streams.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}
