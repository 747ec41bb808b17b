package cmdutil

import (
	"errors"
	"net/url"
	"path/filepath"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// StoreLocation is the store a command works on in embedded mode: a bbolt
// file or a PostgreSQL database. Exactly one field is set.
type StoreLocation struct {
	// Path is the bbolt file.
	Path string
	// Postgres is the URL of the PostgreSQL database (postgres://…).
	Postgres string
}

// ResolveStore returns the store to open: --store (QUEUECTL_STORE, store:
// in the config file, or the store of the context in use) when given, else
// the file --db names.
func ResolveStore(c *config.Config) (StoreLocation, error) {
	store := c.Store
	if store == "" {
		_, ctx, err := selectedContext(c)
		if err != nil {
			return StoreLocation{}, err
		}
		store = ctx.Store
	}
	if store == "" {
		if c.DB == "" {
			return StoreLocation{}, domain.Invalidf("the store path (--db, QUEUECTL_DB or db: in the config file) is empty; name a file, or leave it unset for %s", config.DefaultDBPath())
		}
		return StoreLocation{Path: c.DB}, nil
	}
	u, err := url.Parse(store)
	if err != nil {
		// url.Parse's error repeats the URL, password and all: keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return StoreLocation{}, domain.Invalidf("store URL is malformed: %v; write bolt:///path/to/queuectl.db or postgres://user@host/database", err)
	}
	switch u.Scheme {
	case "bolt":
		p := u.Path
		if u.Host != "" { // bolt://relative/path
			p = filepath.Join(u.Host, u.Path)
		}
		if p == "" {
			return StoreLocation{}, domain.Invalidf("store URL %q names no file; write bolt:///absolute/path.db", store)
		}
		return StoreLocation{Path: p}, nil
	case "postgres", "postgresql":
		return StoreLocation{Postgres: store}, nil
	}
	return StoreLocation{}, domain.Invalidf("store URL %q: scheme %q is not supported; use bolt:///path/to/queuectl.db or postgres://user@host/database",
		config.RedactURL(store), u.Scheme)
}

// StorePath returns the bbolt file to open, for the commands that work on
// a file only; a PostgreSQL store is a usage error naming the command.
func StorePath(c *config.Config) (string, error) {
	loc, err := ResolveStore(c)
	if err != nil {
		return "", err
	}
	if loc.Postgres != "" {
		return "", domain.Invalidf("the store %s is a PostgreSQL database; this command works on a bolt store file (--db or --store bolt:///path)",
			config.RedactURL(loc.Postgres))
	}
	return loc.Path, nil
}

// selectedContext returns the context in use: the one --context names, else
// current_context unless a target is given explicitly — --server, --store,
// --db or their environment variables — which the file's current_context
// never overrides (§8). An empty name means none.
func selectedContext(c *config.Config) (string, config.Context, error) {
	name := c.Context
	if name == "" && c.ServerURL == "" && c.Store == "" && !c.DBExplicit {
		name = c.CurrentContext
	}
	if name == "" {
		return "", config.Context{}, nil
	}
	ctx, ok := c.Contexts[name]
	if !ok {
		field := "context"
		if name != c.Context {
			field = "current_context"
		}
		return "", config.Context{}, c.UndefinedContext(field, name)
	}
	return name, ctx, nil
}

// ContextTarget returns the context that chose the command's target and
// that target (a server, or a store with its password hidden), or "" when
// the target was given explicitly or is the default store.
func ContextTarget(c *config.Config) (name, target string) {
	name, ctx, err := selectedContext(c)
	if err != nil || name == "" {
		return "", ""
	}
	switch {
	case c.ServerURL == "" && ctx.Server != "":
		return name, ctx.Server
	case c.ServerURL == "" && c.Store == "" && ctx.Store != "":
		return name, config.RedactURL(ctx.Store)
	}
	return "", ""
}
