package serve

import (
	"context"
	"log/slog"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/queuectl/queuectl/internal/admin/embedded"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/store/bolt"
	"github.com/queuectl/queuectl/internal/store/postgres"
)

// servedStore is the store a node serves, whichever kind it is: the engine
// and the API run on it the same way.
type servedStore struct {
	st engine.Store
	// name is what the log lines name: the file, or the database with its
	// password hidden.
	name string
	// sock is the unix socket beside a store file; a database has none.
	sock  string
	close func() error
}

// openStore opens the store the configuration names for serving. A bbolt
// file is held for as long as serve runs (short commands then go through
// its socket); a PostgreSQL database is shared with the cluster's other
// nodes and with every command, and its schema is migrated first, under the
// migration lock, so that nodes starting at once do not race.
func openStore(ctx context.Context, log *slog.Logger, f *cmdutil.Factory, c *config.Config, listen string) (*servedStore, error) {
	loc, err := cmdutil.ResolveStore(c)
	if err != nil {
		return nil, err
	}
	if loc.Postgres != "" {
		if listen == "" {
			// Commands reach the database directly; the API is for remote
			// clients, and a database has no file to put a socket beside.
			return nil, domain.WithHint(domain.ErrInvalid, "serve on a PostgreSQL store needs --listen ADDR: there is no store file to put the socket beside",
				"give --listen 127.0.0.1:7870 (or server.listen in the config file); commands on this host can use --store directly")
		}
		// One connection per worker, the claim loop, the heartbeat and
		// the API's requests. A node frozen inside a transaction has
		// its session ended well within the lease TTL, so that its locks
		// stop no other node.
		st, err := openPostgres(ctx, log, loc.Postgres, postgres.Options{Migrate: true, MaxConns: int32(c.Engine.Workers) + 8,
			LeaseTTL: c.Cluster.LeaseTTL})
		if err != nil {
			return nil, err
		}
		return &servedStore{st: st, name: st.Target(), close: st.Close}, nil
	}
	// A short command may hold the store for a moment: wait for it.
	st, err := bolt.Open(loc.Path, bolt.Options{Timeout: embedded.DefaultWait})
	if err != nil {
		return nil, embedded.StoreError(err)
	}
	return &servedStore{st: st, name: loc.Path, sock: loc.Path + ".sock", close: st.Close}, nil
}

// openPostgres opens the database, waiting for it while it is down or out
// of reach (§11: an outage ends no serve, not even at start); a setting
// that keeps it from connecting — a wrong password, a database that does
// not exist — or a signal ends the wait.
func openPostgres(ctx context.Context, log *slog.Logger, url string, opts postgres.Options) (*postgres.Store, error) {
	wait := time.Second
	for {
		st, err := postgres.Open(ctx, url, opts)
		if err == nil || !postgres.Down(err) {
			return st, err
		}
		log.Warn("the database is unreachable; serve waits for it", "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		wait = min(2*wait, maxOpenWait)
	}
}

// maxOpenWait bounds the wait between two tries of a database that is down
// at start.
const maxOpenWait = 15 * time.Second

// maxNodeID bounds --node-id: it is written into every history entry.
const maxNodeID = 128

// checkNodeID refuses a node id that node list, logs and history could not
// show as given.
func checkNodeID(id string) error {
	if id == "" {
		return nil
	}
	if len(id) > maxNodeID || !utf8.ValidString(id) {
		return cmdutil.FlagError("--node-id %q must be valid UTF-8 of at most %d bytes", id, maxNodeID)
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return cmdutil.FlagError("--node-id %q must not contain spaces or control characters (%U)", id, r)
		}
	}
	return nil
}
