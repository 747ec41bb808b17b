package serve

import (
	"context"
	"crypto/tls"
	"log/slog"
	"maps"
	"slices"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/metrics"
	"github.com/queuectl/queuectl/internal/store/postgres"
)

// runPostgres serves the API of a PostgreSQL store on TCP until ctx ends.
// It applies the schema's migrations first, under the migration lock, so
// that nodes starting at once do not race. The delivery engine does not run
// on PostgreSQL yet: the node serves the admin API only, and says so.
func runPostgres(ctx context.Context, f *cmdutil.Factory, url string, h slog.Handler, listen string, tlsConf *tls.Config) error {
	c, err := f.Config()
	if err != nil {
		return err
	}
	if listen == "" {
		// Commands reach the database directly; the API is for remote
		// clients, and a database has no file to put a socket beside.
		return domain.WithHint(domain.ErrInvalid, "serve on a PostgreSQL store needs --listen ADDR: there is no store file to put the socket beside",
			"give --listen 127.0.0.1:7870 (or server.listen in the config file); commands on this host can use --store directly")
	}
	st, err := postgres.Open(ctx, url, postgres.Options{Migrate: true, MaxConns: int32(c.Engine.Workers) + 4})
	if err != nil {
		return err
	}
	defer st.Close()
	log := slog.New(h).With("store", st.Target())
	log.Warn("the delivery engine does not run on a PostgreSQL store yet: serving the admin API only")
	role, _ := domain.ParseRole(c.Engine.Role)
	svc := local.New(st, local.Options{Role: role, MaxPayload: int64(c.Engine.MaxPayload), Actor: "server",
		Receivers: slices.Sorted(maps.Keys(c.Receivers)), LeaseTTL: c.Cluster.LeaseTTL})
	col := metrics.New(metrics.Options{Source: svc, Receivers: slices.Sorted(maps.Keys(c.Receivers)), Logger: log})
	api := httpapi.New(httpapi.Options{
		Service: svc, Auditor: svc, Tokens: c.Server.Tokens, MaxPayload: int64(c.Engine.MaxPayload), Logger: log,
		Ready: func(ctx context.Context) error {
			_, err := svc.Tuning(ctx)
			return err
		},
		Metrics: col.Handler(),
	})
	servers, _, err := startAPI(api, "", listen, tlsConf, log)
	if err != nil {
		return err
	}
	<-ctx.Done()
	stopAPI(servers, c.Engine.ShutdownTimeout)
	api.Close() // the counts of refusals not yet written
	return nil
}
