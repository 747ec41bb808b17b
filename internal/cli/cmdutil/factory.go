package cmdutil

import (
	"context"
	"fmt"
	"maps"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/embedded"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/postgres"
)

// Factory gives commands lazy access to what they need. It is the one place
// that decides how the admin service is reached.
type Factory struct {
	IO *IOStreams
	// GlobalFlags are the root command's persistent flags, parsed before a
	// command runs (or, for shell completion, before its completion
	// functions); Config reads them, once.
	GlobalFlags *pflag.FlagSet
	Now         func() time.Time
	// Ticker ticks for --watch; time.NewTicker's by default. Tests tick
	// by hand.
	Ticker func(d time.Duration) (<-chan time.Time, func())
	// CreateStore lets Admin create the embedded store when it does not
	// exist (the command is marked with CreatesStore).
	CreateStore bool
	// Acting says that the command changes something (it is Audited): it
	// names a target that a context chose before it acts (§8).
	Acting bool

	configOnce sync.Once
	config     *config.Config
	configErr  error

	adminOnce sync.Once
	admin     admin.Service
	adminErr  error

	announceOnce sync.Once
}

// AnnounceContextTarget names on stderr, once, the target of a command that
// acts when a context chose it rather than the command line (§8): an
// operator sees what production command is about to change before it does.
func (f *Factory) AnnounceContextTarget() {
	if !f.Acting {
		return
	}
	c, err := f.Config()
	if err != nil {
		return
	}
	if name, target := ContextTarget(c); name != "" {
		f.announceOnce.Do(func() { fmt.Fprintf(f.IO.ErrOut, "queuectl: using context %s (%s)\n", name, target) })
	}
}

// New returns a Factory over the given streams.
func New(io *IOStreams) *Factory {
	return &Factory{IO: io, Now: func() time.Time { return time.Now().UTC() }}
}

// Config loads the effective configuration once.
func (f *Factory) Config() (*config.Config, error) {
	f.configOnce.Do(func() {
		flags := f.GlobalFlags
		if flags == nil {
			flags = pflag.NewFlagSet("none", pflag.ContinueOnError)
		}
		f.config, f.configErr = config.Load(flags)
	})
	return f.config, f.configErr
}

// Format returns the -o format, checked.
func (f *Factory) Format() (output.Format, error) {
	c, err := f.Config()
	if err != nil {
		return "", err
	}
	return output.ParseFormat(c.Output)
}

// Context returns a context bounded by --timeout (0 means none).
func (f *Factory) Context(parent context.Context) (context.Context, context.CancelFunc) {
	c, err := f.Config()
	if err != nil || c.Timeout <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeout(parent, c.Timeout)
}

// Admin returns the admin service, made once: a server's (--server, or a
// context), else the store named by --store or --db — a PostgreSQL
// database, or a bbolt file, which each call holds only while it reads or
// writes, or reaches through the socket of the process holding it
// (admin/embedded).
func (f *Factory) Admin() (admin.Service, error) {
	f.adminOnce.Do(func() { f.admin, f.adminErr = f.openAdmin() })
	return f.admin, f.adminErr
}

// Close releases what the Factory opened.
func (f *Factory) Close() error {
	if f.admin != nil {
		return f.admin.Close()
	}
	return nil
}

func (f *Factory) openAdmin() (admin.Service, error) {
	c, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.AnnounceContextTarget()
	if server, token, err := remoteTarget(c); err != nil || server != "" {
		if err != nil {
			return nil, err
		}
		// Not returned directly: a nil *Client in the interface would not be nil.
		ro, err := remoteOptions(c, server, token)
		if err != nil {
			return nil, err
		}
		client, err := remote.New(ro)
		if err != nil {
			return nil, err
		}
		return client, nil
	}
	loc, err := ResolveStore(c)
	if err != nil {
		return nil, err
	}
	role, err := domain.ParseRole(c.Engine.Role)
	if err != nil {
		return nil, err
	}
	opts := local.Options{Role: role, MaxPayload: int64(c.Engine.MaxPayload), Actor: localActor(),
		Receivers: slices.Sorted(maps.Keys(c.Receivers)), LeaseTTL: c.Cluster.LeaseTTL}
	if loc.Postgres != "" {
		// Any number of commands and servers share the database: no
		// socket, no lock, straight to it.
		ctx, cancel := f.Context(context.Background())
		defer cancel()
		st, err := postgres.Open(ctx, loc.Postgres, postgres.Options{})
		if err != nil {
			return nil, err
		}
		return local.New(st, opts), nil
	}
	return embedded.New(embedded.Options{Path: loc.Path, Local: opts, Create: f.CreateStore,
		MakeDirs: DefaultStore(loc.Path), Created: f.announceCreated,
		Socket: SocketAPI{MaxPayload: opts.MaxPayload}}), nil
}

// localActor names the operator in history and audit entries in embedded mode.
func localActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "local:" + u.Username
	}
	return "local"
}

// Hintf prints a hint or progress line to stderr unless --quiet is set.
func (f *Factory) Hintf(format string, args ...any) {
	if c, err := f.Config(); err == nil && c.Quiet {
		return
	}
	fmt.Fprintf(f.IO.ErrOut, "queuectl: "+format+"\n", args...)
}

// EmbeddedStore reports whether commands work on a bbolt file (directly or
// through the socket of the process holding it), rather than on a server
// named by --server or a PostgreSQL database.
func (f *Factory) EmbeddedStore() bool {
	c, err := f.Config()
	if err != nil {
		return false
	}
	if server, _, err := remoteTarget(c); err != nil || server != "" {
		return false
	}
	loc, err := ResolveStore(c)
	return err == nil && loc.Postgres == ""
}

// DefaultStore reports whether path is the default store's, the one store
// whose missing directories a command creates.
func DefaultStore(path string) bool {
	return filepath.Clean(path) == filepath.Clean(config.DefaultDBPath())
}

// announceCreated says on stderr that a command created a store: one at a
// mistyped path would otherwise go unnoticed.
func (f *Factory) announceCreated(path string) {
	fmt.Fprintf(f.IO.ErrOut, "queuectl: created a new store at %s\n", path)
}
