package cmdutil

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/queuectl/queuectl/internal/config"
)

// Target is what commands act on and where that choice came from, for an
// operator to see (config view).
type Target struct {
	// Kind is server, store (a --store URL) or db (a bbolt file).
	Kind string `json:"kind" yaml:"kind"`
	// Value is the server URL, the store URL with its password hidden,
	// or the file.
	Value string `json:"value" yaml:"value"`
	// Context is the context that chose it, "" for none.
	Context string `json:"context,omitempty" yaml:"context,omitempty"`
	// Source says what set it: a flag, an environment variable, the
	// config file, a context, or the default.
	Source string `json:"source" yaml:"source"`
}

// TargetOf says what commands of this configuration act on, by the same
// rules remoteTarget and ResolveStore follow, and what chose it. flags are
// the global flags given (nil for none).
func TargetOf(c *config.Config, flags *pflag.FlagSet) (Target, error) {
	from := func(flag, key string) string {
		switch {
		case flags != nil && flags.Changed(flag):
			return "--" + flag
		case os.Getenv(envOf(key)) != "":
			return envOf(key)
		case c.File != "":
			return key + " in " + c.File
		}
		return "the default"
	}
	name, ctx, err := selectedContext(c)
	if err != nil {
		return Target{}, err
	}
	chosenBy := ""
	if name != "" {
		chosenBy = "context " + name + " (" + from("context", "context") + ")"
		if c.Context == "" {
			chosenBy = "context " + name + " (current_context in " + c.File + ")"
		}
	}
	switch {
	case c.ServerURL != "":
		return Target{Kind: "server", Value: c.ServerURL, Source: from("server", "server_url")}, nil
	case name != "" && ctx.Server != "":
		return Target{Kind: "server", Value: ctx.Server, Context: name, Source: chosenBy}, nil
	case c.Store != "":
		return Target{Kind: "store", Value: config.RedactURL(c.Store), Source: from("store", "store")}, nil
	case name != "" && ctx.Store != "":
		return Target{Kind: "store", Value: config.RedactURL(ctx.Store), Context: name, Source: chosenBy}, nil
	}
	t := Target{Kind: "db", Value: c.DB, Source: from("db", "db")}
	if !c.DBExplicit && c.DB == config.DefaultDBPath() {
		t.Source = "the default"
	}
	return t, nil
}

// envOf is the environment variable of a configuration key: QUEUECTL_ and
// the key, but QUEUECTL_SERVER for server_url.
func envOf(key string) string {
	if key == "server_url" {
		return config.EnvPrefix + "_SERVER"
	}
	return config.EnvPrefix + "_" + envName(key)
}

// envName is the environment variable suffix of a configuration key.
func envName(key string) string {
	out := []byte(key)
	for i, b := range out {
		switch {
		case b >= 'a' && b <= 'z':
			out[i] = b - 'a' + 'A'
		case b == '.':
			out[i] = '_'
		}
	}
	return string(out)
}
