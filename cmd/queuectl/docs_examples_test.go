//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The runnable examples of the docs. A fenced shell block is runnable when
// the line before it is the comment
//
//	<!-- test -->
//
// or, when the block needs programs besides queuectl and a POSIX shell,
//
//	<!-- test: needs jq curl -->
//
// A page's runnable blocks run in page order as one bash script, as a reader
// would type them into one shell: in an empty directory that is also $HOME,
// with an empty embedded store, the queuectl this test built first on PATH,
// and `go run ./cmd/queuectl` standing for it. The script runs with
// `set -Eeuo pipefail`, so any command that fails fails the page, and the
// failure names the page and line of the command. A block that leaves a
// process running fails too.

// docExampleTimeout bounds one page's examples.
const docExampleTimeout = 3 * time.Minute

// docScriptPreamble opens every page's script. Its docline array, filled in
// after it, maps the script's lines to the doc's.
const docScriptPreamble = `set -Eeuo pipefail
trap 'echo "docs example failed at ${docline[$LINENO]:-script line $LINENO}: $BASH_COMMAND" >&2' ERR
# The docs' first screen says go run ./cmd/queuectl; here that is the queuectl under test.
go() {
	if [ "${1-}" = run ] && [ "${2-}" = ./cmd/queuectl ]; then
		shift 2
		queuectl "$@"
		return
	fi
	echo "docs test: an example may run 'go run ./cmd/queuectl', not 'go $*'" >&2
	return 1
}
`

// docExample is a runnable block and what it needs.
type docExample struct {
	mdBlock
	needs []string
}

// docExamples returns the runnable blocks of doc, failing on a marker that
// is not one.
func docExamples(t *testing.T, doc mdDoc) []docExample {
	t.Helper()
	var out []docExample
	for _, b := range doc.blocks {
		if b.marker != "test" && !strings.HasPrefix(b.marker, "test:") {
			continue
		}
		where := fmt.Sprintf("%s:%d", doc.path, b.line)
		require.Contains(t, []string{"sh", "bash"}, b.info, "%s: a runnable block is a ```sh block", where)
		ex := docExample{mdBlock: b}
		if opts, ok := strings.CutPrefix(b.marker, "test:"); ok {
			words := strings.Fields(opts)
			require.True(t, len(words) > 1 && words[0] == "needs", "%s: want <!-- test --> or <!-- test: needs PROGRAM... -->", where)
			ex.needs = words[1:]
		}
		out = append(out, ex)
	}
	return out
}

// docScript is the bash script of a page's examples.
func docScript(path string, examples []docExample) string {
	head := strings.Split(strings.TrimSuffix(docScriptPreamble, "\n"), "\n")
	var body, lines []string
	for _, ex := range examples {
		for i, l := range strings.Split(strings.TrimSuffix(ex.body, "\n"), "\n") {
			body = append(body, l)
			lines = append(lines, fmt.Sprintf("[%d]=%q", len(head)+2+len(body)-1, fmt.Sprintf("%s:%d", path, ex.line+1+i)))
		}
	}
	return strings.Join(head, "\n") + "\n" +
		"declare -A docline=(" + strings.Join(lines, " ") + ")\n" +
		strings.Join(body, "\n") + "\n"
}

func TestDocScript(t *testing.T) {
	t.Parallel()

	script := docScript("docs/x.md", []docExample{
		{mdBlock: mdBlock{line: 10, body: "queuectl version\n"}},
		{mdBlock: mdBlock{line: 20, body: "a\nb\n"}},
	})
	lines := strings.Split(script, "\n")
	n := strings.Count(docScriptPreamble, "\n")
	require.Equal(t, "queuectl version", lines[n+1])
	require.Equal(t, "b", lines[n+3])
	require.Contains(t, lines[n], fmt.Sprintf(`[%d]="docs/x.md:11"`, n+2), "bash counts lines from 1")
	require.Contains(t, lines[n], fmt.Sprintf(`[%d]="docs/x.md:22"`, n+4))
}

// TestDocExamples runs the runnable examples of README.md and docs/**.md.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the docs' examples build demo stores: not in -short")
	}
	bin, err := exec.LookPath("queuectl")
	require.NoError(t, err, "TestMain puts queuectl on PATH")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("the docs' examples are bash: no bash on PATH")
	}

	pages := 0
	for _, f := range docFiles(t) {
		doc := readDoc(t, f)
		examples := docExamples(t, doc)
		if len(examples) == 0 {
			continue
		}
		pages++
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			for _, ex := range examples {
				for _, prog := range ex.needs {
					if _, err := exec.LookPath(prog); err != nil {
						t.Skipf("%s:%d needs %s, which is not on PATH", f, ex.line, prog)
					}
				}
			}
			runDocScript(t, bash, filepath.Dir(bin), f, docScript(f, examples))
		})
	}
	require.GreaterOrEqual(t, pages, 5, "README.md and the guides have runnable examples")
}

// runDocScript runs a page's script in a fresh directory and fails with
// its output when it fails.
func runDocScript(t *testing.T, bash, binDir, page, script string) {
	dir := t.TempDir()
	scriptFile := filepath.Join(t.TempDir(), "examples.sh")
	require.NoError(t, os.WriteFile(scriptFile, []byte(script), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), docExampleTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, scriptFile)
	cmd.Dir = dir
	// Nothing of the caller's environment but PATH: a QUEUECTL_STORE of the
	// developer's must not reach the examples.
	cmd.Env = []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, ".local", "share"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, ".config"),
		"TMPDIR=" + t.TempDir(),
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		"USER=docs",
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The examples' background processes share the script's process group,
	// so that none outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Start())
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		t.Fatalf("%s: the examples left a process running (stop what they start in the background):\n%s", page, out.String())
	case ctx.Err() != nil:
		t.Fatalf("%s: the examples did not finish within %s:\n%s", page, docExampleTimeout, out.String())
	case err != nil:
		t.Fatalf("%s: %v:\n%s", page, err, out.String())
	}
}
