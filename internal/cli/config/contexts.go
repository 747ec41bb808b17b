package config

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// contextRow is one context of `config get-contexts`.
type contextRow struct {
	Name      string `json:"name" yaml:"name"`
	Current   bool   `json:"current" yaml:"current"`
	Server    string `json:"server,omitempty" yaml:"server,omitempty"`
	Store     string `json:"store,omitempty" yaml:"store,omitempty"`
	TokenFile string `json:"token_file,omitempty" yaml:"token_file,omitempty"`
	CAFile    string `json:"ca_file,omitempty" yaml:"ca_file,omitempty"`
}

var contextColumns = []output.Column[contextRow]{
	{Header: "CURRENT", Value: func(r contextRow) string { return map[bool]string{true: "*", false: ""}[r.Current] }},
	{Header: "NAME", Value: func(r contextRow) string { return r.Name }},
	{Header: "TARGET", Value: func(r contextRow) string {
		if r.Server != "" {
			return r.Server
		}
		return output.Dash(r.Store)
	}},
	{Header: "TOKEN FILE", Value: func(r contextRow) string { return output.Dash(r.TokenFile) }},
	{Header: "CA FILE", Value: func(r contextRow) string { return output.Dash(r.CAFile) }},
}

func newGetContextsCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts of the config file, the current one marked",
		Long: `List the contexts defined under contexts: in the config file, by name,
with what each targets (a server or a store) and its token and CA files. The
current one — current_context, or the context --context names — is marked
with * (current: true in -o json).`,
		Example: `  queuectl config get-contexts
  queuectl config get-contexts -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := f.Config()
			if err != nil {
				return err
			}
			format, err := f.Format()
			if err != nil {
				return err
			}
			current := c.Context
			if current == "" {
				current = c.CurrentContext
			}
			l := output.NewList(f.IO.Out, format, contextColumns, func(r contextRow) string { return r.Name })
			for _, name := range slices.Sorted(maps.Keys(c.Contexts)) {
				ctx := c.Contexts[name]
				if err := l.Add(contextRow{Name: name, Current: name == current, Server: ctx.Server,
					Store: config.RedactURL(ctx.Store), TokenFile: ctx.TokenFile, CAFile: ctx.CAFile}); err != nil {
					return err
				}
			}
			if err := l.Close(); err != nil {
				return err
			}
			if l.Count() == 0 && format.Tabular() {
				f.Hintf("no contexts are defined: add them under contexts: in the config file (%s)", configFile(c))
			}
			return nil
		},
	}
}

func newUseContextCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "use-context NAME",
		Short: "Make a context the current one (current_context in the config file)",
		Long: `Set current_context in the config file to NAME, a context defined under
contexts: there; the rest of the file, comments included, is kept as it is.
Commands then act on that context's target unless one is given explicitly
(--server, --store, --db, --context or their QUEUECTL_* variables).`,
		Example: `  queuectl config use-context prod
  queuectl config get-contexts`,
		Args:              cmdutil.ExactArgs(1, "NAME"),
		ValidArgsFunction: completeContexts(f),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := f.Config()
			if err != nil {
				return err
			}
			name := args[0]
			if _, ok := c.Contexts[name]; !ok {
				names := slices.Sorted(maps.Keys(c.Contexts))
				if len(names) == 0 {
					return domain.WithHint(domain.ErrInvalid, fmt.Sprintf("context %q is not defined: the config file defines none", name),
						fmt.Sprintf("define it under contexts: in the config file (%s)", configFile(c)))
				}
				return domain.Invalidf("context %q is not defined under contexts: in %s%s; the contexts are %s",
					name, configFile(c), domain.DidYouMean(name, names), strings.Join(names, ", "))
			}
			if err := setCurrentContext(c.File, name); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "queuectl: switched to context %s (current_context in %s)\n", name, c.File)
			return nil
		},
	}
}

// completeContexts completes the names of the contexts.
func completeContexts(f *cmdutil.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Config()
		if err != nil || len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return slices.Sorted(maps.Keys(c.Contexts)), cobra.ShellCompDirectiveNoFileComp
	}
}

func configFile(c *config.Config) string {
	if c.File != "" {
		return c.File
	}
	return "none was read"
}

// setCurrentContext writes current_context: name into the YAML file at
// path, keeping the rest of it, and replaces the file atomically.
func setCurrentContext(path, name string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the config file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return domain.Invalidf("config file %s: %v", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return domain.Invalidf("config file %s is not a mapping of keys", path)
	}
	root := doc.Content[0]
	set := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "current_context" {
			root.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}
			set = true
		}
	}
	if !set {
		root.Content = append(root.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "current_context"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name})
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return writeAtomic(path, out.Bytes())
}

// writeAtomic replaces the file at path with b, keeping its mode.
func writeAtomic(path string, b []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("write the config file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, bytes.NewReader(b)); err != nil {
		tmp.Close()
		return fmt.Errorf("write the config file: %w", err)
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
