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
//
// The man pages are dated with the commit the docs are generated from:
// SOURCE_DATE_EPOCH if it is set (the reproducible-builds convention),
// else the date of the commit checked out in DIR, so that two runs on one
// commit write the same bytes.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	date, err := commitDate(*dir)
	if err != nil {
		return err
	}
	if err := generate(newRoot(), cli.ExitStatuses(), date, *dir); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s, %s and %s\n",
		filepath.Join(*dir, manDir), filepath.Join(*dir, referenceDir), filepath.Join(*dir, completionsDir))
	return err
}

// commitDate is the date of the man pages: SOURCE_DATE_EPOCH (seconds
// since 1970) if set, else the committer date of the commit checked out in
// dir, in UTC.
func commitDate(dir string) (time.Time, error) {
	if v, ok := os.LookupEnv("SOURCE_DATE_EPOCH"); ok {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds since 1970", v)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	out, err := exec.Command("git", "-C", dir, "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("the man pages are dated with the commit's date: %s is not a git checkout with a commit "+
			"(or git is missing); set SOURCE_DATE_EPOCH", dir)
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("git log gave %q for the commit date", out)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// newRoot builds queuectl's whole command tree, on streams that no command
// of it runs on.
func newRoot() *cobra.Command {
	return cli.NewRootCmd(cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard}))
}
