// Command gen-docs writes queuectl's man pages, its markdown command
// reference and its shell completions from the commands' help, for the
// repository (man/, docs/reference/, completions/) and the release archives.
// It is a program of its own so that the documentation generators are not
// linked into queuectl, whose every command would pay for their package
// initialisation.
//
// Usage:
//
//	go run ./cmd/gen-docs [--dir DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
}

// run parses the flags and writes the docs under --dir.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen-docs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "directory to write man/, docs/reference/ and completions/ into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := generate(newRoot(), cli.ExitStatuses(), *dir); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "wrote %s, %s and %s\n",
		filepath.Join(*dir, manDir), filepath.Join(*dir, referenceDir), filepath.Join(*dir, completionsDir))
	return err
}

// newRoot builds queuectl's whole command tree, on streams that no command
// of it runs on.
func newRoot() *cobra.Command {
	return cli.NewRootCmd(cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard}))
}
