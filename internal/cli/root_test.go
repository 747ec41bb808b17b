package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
)

func newTestFactory(out, errOut io.Writer) *cmdutil.Factory {
	return cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut})
}

// TestSubcommandNames: each entry of subcommands builds the command it is
// named for, so that a command line builds only the command it runs.
func TestSubcommandNames(t *testing.T) {
	t.Parallel()
	f := newTestFactory(io.Discard, io.Discard)
	var names []string
	for _, sc := range subcommands() {
		require.Equal(t, sc.name, sc.build(f).Name())
		names = append(names, sc.name)
	}
	var tree []string
	for _, c := range NewRootCmd(f).Commands() {
		tree = append(tree, c.Name())
	}
	require.ElementsMatch(t, names, tree)
}

// TestNewRootForBuildsOneCommand: a command line builds the root and the
// one command it runs; what needs the others builds them all.
func TestNewRootForBuildsOneCommand(t *testing.T) {
	t.Parallel()
	all := len(subcommands())
	for _, tc := range []struct {
		args []string
		want []string // the commands built; nil: all of them
	}{
		{[]string{"version"}, []string{"version"}},
		{[]string{"queue", "list", "-o", "json"}, []string{"queue"}},
		{[]string{"-o", "json", "--db", "x.db", "queue", "list"}, []string{"queue"}},
		{[]string{"--db=x.db", "-q", "message", "show", "ID"}, []string{"message"}},
		{[]string{"--timeout", "5s", "version", "--bogus"}, []string{"version"}},
		{[]string{"queue", "--help"}, []string{"queue"}},
		{nil, nil},
		{[]string{"--help"}, nil},
		{[]string{"help", "queue"}, nil},
		{[]string{"queu"}, nil},
		{[]string{"completion", "bash"}, nil},
		{[]string{cobra.ShellCompRequestCmd, "queue", ""}, nil},
		{[]string{"--db", "version"}, nil}, // version is the value of --db
	} {
		var got []string
		for _, c := range newRootFor(newTestFactory(io.Discard, io.Discard), tc.args).Commands() {
			got = append(got, c.Name())
		}
		if tc.want == nil {
			require.Len(t, got, all, "%q", tc.args)
			continue
		}
		require.Equal(t, tc.want, got, "%q", tc.args)
	}
}

// TestHelpOfEachCommandBuiltAlone: every command's help, run as a command
// line builds it (alone), is the same as in the whole tree, and so is the
// error of an unknown subcommand or flag.
func TestHelpOfEachCommandBuiltAlone(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(NewRootCmd(newTestFactory(io.Discard, io.Discard)), nil)
	require.Greater(t, len(paths), 40)

	whole := func(args []string) (string, string) {
		var out, errOut bytes.Buffer
		root := NewRootCmd(newTestFactory(&out, &errOut))
		root.SetArgs(args)
		_, err := root.ExecuteC()
		if err != nil {
			errOut.WriteString(err.Error())
		}
		return out.String(), errOut.String()
	}
	alone := func(args []string) (string, string) {
		var out, errOut bytes.Buffer
		f := newTestFactory(&out, &errOut)
		root := newRootFor(f, args)
		root.SetArgs(args)
		_, err := root.ExecuteC()
		if err != nil {
			errOut.WriteString(err.Error())
		}
		return out.String(), errOut.String()
	}
	for _, p := range paths {
		for _, extra := range [][]string{{"--help"}, {"--no-such-flag"}, {"no-such-command", "--help"}} {
			args := append(append([]string(nil), p...), extra...)
			wantOut, wantErr := whole(args)
			gotOut, gotErr := alone(args)
			name := strings.Join(args, " ")
			require.Equal(t, wantOut, gotOut, "queuectl %s: stdout", name)
			require.Equal(t, wantErr, gotErr, "queuectl %s: stderr", name)
		}
	}
}
