// Package gendocs implements the hidden `queuectl gen-docs` command, which
// writes the man pages and shell completions that releases ship.
package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manDate is the date in the man pages' header. It is fixed so that the
// checked-in pages change only when the commands do.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// NewCmd builds `gen-docs`; root is the tree to document.
func NewCmd(root *cobra.Command) *cobra.Command {
	dir := "."
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write man/ and completions/ for packaging",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := Generate(root, dir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", filepath.Join(dir, "man"), filepath.Join(dir, "completions"))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write man/ and completions/ into")
	return cmd
}

// Generate writes dir/man (one page per command) and dir/completions (bash,
// zsh, fish, powershell), replacing what is there.
func Generate(root *cobra.Command, dir string) error {
	manDir, compDir := filepath.Join(dir, "man"), filepath.Join(dir, "completions")
	for _, d := range []string{manDir, compDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	disableAutoGenTag(root)
	header := &doc.GenManHeader{Title: "QUEUECTL", Section: "1", Source: "queuectl", Manual: "queuectl manual", Date: &manDate}
	if err := doc.GenManTree(root, header, manDir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	gens := map[string]func(*bytes.Buffer) error{
		"queuectl.bash": func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) },
		"queuectl.zsh":  func(b *bytes.Buffer) error { return root.GenZshCompletion(b) },
		"queuectl.fish": func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) },
		"queuectl.ps1":  func(b *bytes.Buffer) error { return root.GenPowerShellCompletionWithDesc(b) },
	}
	for name, gen := range gens {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("completion %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(compDir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}
