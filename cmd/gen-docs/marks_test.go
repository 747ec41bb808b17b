package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/httpapi"
)

// sectionMark is what cites a section of the product specification, which
// users do not have.
const sectionMark = "§"

// TestNoSectionMarks: nothing a user reads cites a section of the
// specification: not the API document the server serves, not any
// command's --help, not the guides, the README, the man pages, the
// markdown reference or the completions.
func TestNoSectionMarks(t *testing.T) {
	t.Parallel()
	var found []string
	check := func(where, text string) {
		for line := range strings.SplitSeq(text, "\n") {
			if strings.Contains(line, sectionMark) {
				found = append(found, where+": "+strings.TrimSpace(line))
			}
		}
	}

	// The served document is httpapi.OpenAPI (TestOpenAPIServed); JSON may
	// write the mark as \u00a7, so its strings are read decoded.
	var doc any
	require.NoError(t, json.Unmarshal(httpapi.OpenAPI, &doc))
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				check("/v1/openapi.json "+path, k)
				walk(path+"/"+k, sub)
			}
		case []any:
			for _, sub := range v {
				walk(path, sub)
			}
		case string:
			check("/v1/openapi.json "+path, v)
		}
	}
	walk("#", doc)

	// Every command's --help, as queuectl prints it.
	var out bytes.Buffer
	root := cli.NewRootCmd(cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: io.Discard}))
	var helps func(c *cobra.Command)
	helps = func(c *cobra.Command) {
		out.Reset()
		c.SetOut(&out)
		c.HelpFunc()(c, nil)
		require.NotEmpty(t, out.String(), c.CommandPath())
		check(c.CommandPath()+" --help", out.String())
		for _, sub := range c.Commands() {
			helps(sub)
		}
	}
	helps(root)

	// What the repository ships: README, guides, man pages, reference, completions.
	for _, dir := range []string{"README.md", "docs", manRoot, completionsDir} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repoRoot, p)
			check(rel, string(b))
			return nil
		})
		require.NoError(t, err)
	}
	require.Empty(t, found, "section marks of the specification, which users do not have")
}
