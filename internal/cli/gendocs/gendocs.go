// Package gendocs implements the hidden `queuectl gen-docs` command, which
// writes the man pages and shell completions that releases ship.
package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// manDate is the date in the man pages' header. It is fixed so that the
// checked-in pages change only when the commands do.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// ExitStatus is one exit status of queuectl, for the pages' EXIT STATUS
// section.
type ExitStatus struct {
	Code    int
	Meaning string
}

// NewCmd builds `gen-docs`; root is the tree to document, and statuses
// are the exit statuses every command shares.
func NewCmd(root *cobra.Command, statuses []ExitStatus) *cobra.Command {
	dir := "."
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write man/ and completions/ for packaging",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := Generate(root, statuses, dir); err != nil {
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
func Generate(root *cobra.Command, statuses []ExitStatus, dir string) error {
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
	if err := genManTree(root, exitStatusSection(statuses), manDir); err != nil {
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

// genManTree writes the page of cmd and of each command under it. Each page
// has its own title (QUEUECTL-QUEUE-LIST), and an EXIT STATUS section.
func genManTree(cmd *cobra.Command, exitStatus, dir string) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genManTree(c, exitStatus, dir); err != nil {
			return err
		}
	}
	// An empty title is cobra's default: the command path in capitals.
	header := &doc.GenManHeader{Section: "1", Source: "queuectl", Manual: "queuectl manual", Date: &manDate}
	var b bytes.Buffer
	restore := literalText(cmd)
	err := doc.GenMan(cmd, header, &b)
	restore()
	if err != nil {
		return err
	}
	page := addSection(b.String(), exitStatus)
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, name), []byte(asciiRoff(page)), 0o644)
}

// literalText makes the texts of cmd's page render as written: cobra hands
// them to a Markdown renderer, which drops <placeholders> as HTML tags and
// takes * and _ for emphasis. It escapes those characters, and returns what
// puts the texts back.
func literalText(cmd *cobra.Command) func() {
	long, short := cmd.Long, cmd.Short
	cmd.Long, cmd.Short = escapeMarkdown(long), escapeMarkdown(short)
	var undo []func()
	for _, fs := range []*pflag.FlagSet{cmd.NonInheritedFlags(), cmd.InheritedFlags()} {
		fs.VisitAll(func(f *pflag.Flag) {
			usage := f.Usage
			f.Usage = escapeMarkdown(usage)
			undo = append(undo, func() { f.Usage = usage })
		})
	}
	return func() {
		cmd.Long, cmd.Short = long, short
		for _, u := range undo {
			u()
		}
	}
}

// markdownEscapes are the characters that Markdown would read as markup in
// queuectl's help texts.
var markdownEscapes = strings.NewReplacer(`\`, `\\`, `<`, `\<`, `>`, `\>`, `*`, `\*`, `_`, `\_`, "`", "\\`", `[`, `\[`, `]`, `\]`, `&`, `\&`)

func escapeMarkdown(s string) string { return markdownEscapes.Replace(s) }

// exitStatusSection is the roff of the EXIT STATUS section.
func exitStatusSection(statuses []ExitStatus) string {
	if len(statuses) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(".SH EXIT STATUS\n")
	for _, s := range statuses {
		fmt.Fprintf(&b, ".TP\n\\fB%d\\fP\n%s\n", s.Code, s.Meaning)
	}
	return b.String()
}

// addSection puts section before SEE ALSO, as man-pages(7) orders them, or
// at the end of a page without one.
func addSection(page, section string) string {
	if i := strings.Index(page, "\n.SH SEE ALSO"); i >= 0 {
		return page[:i+1] + section + "\n" + page[i+1:]
	}
	return strings.TrimRight(page, "\n") + "\n\n" + section
}

// asciiRoff writes every character outside ASCII as a groff escape
// (\[u2014] for an em dash), which groff and mandoc read whatever their
// input encoding: raw UTF-8 makes groff warn and print garbage.
func asciiRoff(page string) string {
	var b strings.Builder
	for _, r := range page {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
}

func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}
