// Package serve implements `queuectl serve`: run the delivery engine and the
// HTTP API in the foreground until a signal stops it.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/metrics"
)

// Options are the parsed flags of `queuectl serve`.
type Options struct {
	LogFormat string
	Listen    string
	TLSCert   string
	TLSKey    string
	Insecure  bool
	NodeID    string
}

// NewCmd builds `queuectl serve`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the delivery engine and the HTTP API in the foreground",
		Long: `Run the engine: route inbound messages to their receivers, deliver outbound
messages, retry transient errors, block EOIO queues behind failed heads, and
recover from crashes with blacklisting. It logs one line per notable event to
stderr (start, crash recovery, queue blocked, message blacklisted, stop).

It serves the HTTP API on the unix socket <db>.sock (mode 0600; every
command run on the same store uses it while serve holds the store) and, with
--listen, on TCP. A non-loopback --listen needs TLS (--tls-cert/--tls-key) and
tokens (server.tokens in the config), unless --insecure is given.

On a PostgreSQL store (--store postgres://…) several serve processes form a
cluster: each node heartbeats into the database, owns the queues whose
lease it holds, and takes over the queues of a node that died once its lease
expires (cluster.lease_ttl), running crash recovery on the messages that node
had in flight. A node on PostgreSQL has no socket: it needs --listen.
--node-id names the node (default engine.node_id, else hostname-pid); a
restarted node with the same id is a new incarnation.

SIGINT or SIGTERM stops it cleanly: requests in flight finish, deliveries in
flight get engine.shutdown_timeout to finish, the rest are handed back to
TBDL; a clean stop never counts as a crash.`,
		Example: `  queuectl serve
  queuectl serve --listen 127.0.0.1:7870
  queuectl serve --listen 0.0.0.0:7870 --tls-cert server.crt --tls-key server.key --log-format json
  queuectl serve --store postgres://queuectl@db1/queuectl --node-id n1 --listen 127.0.0.1:7871`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.LogFormat, "log-format", "text", "log line format: text or json")
	fl.StringVar(&opts.Listen, "listen", "", "also serve the API on this TCP address (default server.listen)")
	fl.StringVar(&opts.TLSCert, "tls-cert", "", "TLS certificate file for --listen (default server.tls_cert)")
	fl.StringVar(&opts.TLSKey, "tls-key", "", "TLS key file for --listen (default server.tls_key)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "allow a non-loopback --listen without TLS or tokens")
	fl.StringVar(&opts.NodeID, "node-id", "", "the name this node runs under (default engine.node_id, else hostname-pid)")
	return cmd
}

func run(ctx context.Context, f *cmdutil.Factory, opts *Options) error {
	cmdutil.TuneForEngine()
	c, err := f.Config()
	if err != nil {
		return err
	}
	var h slog.Handler
	switch opts.LogFormat {
	case "text":
		h = slog.NewTextHandler(f.IO.ErrOut, nil)
	case "json":
		h = slog.NewJSONHandler(f.IO.ErrOut, nil)
	default:
		return cmdutil.FlagError("--log-format %q must be text or json", opts.LogFormat)
	}
	listen := firstOf(opts.Listen, c.Server.Listen)
	cert, key := firstOf(opts.TLSCert, c.Server.TLSCert), firstOf(opts.TLSKey, c.Server.TLSKey)
	if err := checkListen(listen, cert, key, len(c.Server.Tokens) > 0, opts.Insecure); err != nil {
		return err
	}
	tlsConf, err := loadTLS(cert, key)
	if err != nil {
		return err
	}
	if err := checkNodeID(opts.NodeID); err != nil {
		return err
	}
	// The TCP address is taken before the store is opened: one in use
	// fails serve at once, before recovery and the start-up warnings.
	tl, err := listenTCP(listen, tlsConf)
	if err != nil {
		return err
	}
	if tl != nil {
		defer tl.Close() // closed already once it was served
	}
	where, err := openStore(ctx, slog.New(h), f, c, listen)
	if err != nil {
		return err
	}
	defer where.close()
	st, path := where.st, where.name
	log := slog.New(h).With("store", path)
	// The node is ready once crash recovery is done and the engine
	// delivers, until a signal asks it to stop; /readyz and
	// queuectl_node_up report it.
	var state nodeState
	stop := context.AfterFunc(ctx, state.stopping)
	defer stop()
	var col *metrics.Collector // set before the engine runs, so before any event
	eng, err := engine.Configured(st, c, engine.Options{Logger: log, Config: engine.Config{NodeID: opts.NodeID, Address: nodeAddress(where.sock, listen)}, Observe: func(ev engine.Event) {
		if ev.Kind == engine.EventRecovered {
			state.started()
		}
		col.Observe(ev)
	}})
	if err != nil {
		return err
	}
	role, _ := domain.ParseRole(c.Engine.Role)
	svc := local.New(st, local.Options{Role: role, MaxPayload: int64(c.Engine.MaxPayload), Actor: "server",
		Receivers: slices.Sorted(maps.Keys(c.Receivers)), RouteAtSend: true, Routes: c.RoutingRules(), LeaseTTL: c.Cluster.LeaseTTL})
	col = metrics.New(metrics.Options{
		Source: svc, Node: eng.NodeID(), Running: state.ready, Receivers: slices.Sorted(maps.Keys(c.Receivers)), Logger: log,
	})
	api := httpapi.New(httpapi.Options{
		Service: svc, Auditor: svc, Tokens: c.Server.Tokens, MaxPayload: int64(c.Engine.MaxPayload), Logger: log,
		Ready: func(ctx context.Context) error {
			if !state.ready() {
				return errors.New("the engine is not delivering: it is recovering from a crash, or stopping")
			}
			_, err := svc.Tuning(ctx)
			return err
		},
		Metrics: col.Handler(),
	})

	warnUnconfigured(ctx, svc, slices.Sorted(maps.Keys(c.Receivers)), log)
	servers, apiFailed, err := startAPI(api, where.sock, tl, tlsConf != nil, log)
	if err != nil {
		return err
	}
	// A listener that fails stops serve: a server that cannot be reached
	// must not go on as if it could.
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var apiErr error
	go func() {
		select {
		case apiErr = <-apiFailed:
			log.Error("api listener failed; serve stops", "err", apiErr)
			stopRun()
		case <-runCtx.Done():
		}
	}()
	err = eng.Run(runCtx)
	stopRun()
	state.stopping()
	stopAPI(servers, c.Engine.ShutdownTimeout)
	api.Close() // the counts of refusals not yet written
	if where.sock != "" {
		os.Remove(where.sock)
	}
	if err == nil && apiErr != nil {
		err = domain.Errorf(domain.ErrUnavailable, "the API stopped serving: %v", apiErr)
	}
	return err
}

// warnUnconfigured logs, at start, each receiver that stored messages
// wait for and the configuration lacks (§8): this node leaves them TBDL, for
// a node that has the receiver. A store that cannot be read now is the
// engine's to report.
func warnUnconfigured(ctx context.Context, svc admin.Service, receivers []string, log *slog.Logger) {
	lacking, err := admin.Unconfigured(ctx, svc, receivers)
	if err != nil {
		log.Warn("could not look for messages waiting for receivers not configured", "err", err)
		return
	}
	for _, b := range lacking {
		log.Warn("receiver not configured on this node: stored messages wait TBDL for a node that has it",
			"receiver", b.Receiver, "messages", b.Messages, "queues", b.Queues)
	}
}

// nodeAddress is where node list says this node serves its API: its TCP
// address when it listens on one, else its socket.
func nodeAddress(sock, listen string) string {
	if listen != "" {
		return listen
	}
	return "unix://" + sock
}

// nodeState is where a serve process is in its life: starting (crash
// recovery), ready, or stopping. It only moves forward.
type nodeState struct{ v atomic.Int32 }

const (
	nodeStarting int32 = iota
	nodeReady
	nodeStopping
)

func (s *nodeState) started()    { s.v.CompareAndSwap(nodeStarting, nodeReady) }
func (s *nodeState) stopping()   { s.v.Store(nodeStopping) }
func (s *nodeState) ready() bool { return s.v.Load() == nodeReady }

// checkListen refuses a TCP listener that would expose the API unprotected.
func checkListen(addr, cert, key string, tokens, insecure bool) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cmdutil.FlagError("--listen %q is not host:port: %v", addr, err)
	}
	if (cert == "") != (key == "") {
		return cmdutil.FlagError("--tls-cert and --tls-key go together")
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if loopback || insecure || (cert != "" && tokens) {
		return nil
	}
	return domain.WithHint(domain.ErrInvalid,
		"--listen "+addr+" is not a loopback address: it needs TLS (--tls-cert, --tls-key) and tokens (server.tokens)",
		"create a token with 'queuectl token create NAME --role ROLE', or pass --insecure to accept the risk")
}

// loadTLS reads the certificate and key for --listen, if given, before
// anything is opened: a wrong file is a usage error, exit 2.
func loadTLS(cert, key string) (*tls.Config, error) {
	if cert == "" {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, domain.Invalidf("TLS certificate %s / key %s: %v", cert, key, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// listenTCP takes the TCP address of --listen, if any: a TLS listener
// with tlsConf, serving at most httpapi.MaxConnections connections at once. An address another process holds is refused with a hint.
func listenTCP(listen string, tlsConf *tls.Config) (net.Listener, error) {
	if listen == "" {
		return nil, nil
	}
	tl, err := net.Listen("tcp", listen)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("listen on %s: the address is in use by another process", listen),
			"is another 'queuectl serve' running there? stop it, or give another --listen (or server.listen) address; nothing was started")
	case errors.Is(err, syscall.EACCES):
		return nil, domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("listen on %s: permission denied", listen),
			"a port below 1024 needs privileges: use a higher port; nothing was started")
	case err != nil:
		return nil, domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("listen on %s: %v", listen, err),
			"check the --listen (or server.listen) address; nothing was started")
	}
	// The connection limit goes under TLS: the HTTP server must see the
	// *tls.Conn to fill a request's TLS state and to answer plain HTTP
	// sent to it.
	tl = httpapi.LimitListener(tl, httpapi.MaxConnections)
	if tlsConf != nil {
		tl = tls.NewListener(tl, tlsConf)
	}
	return tl, nil
}

// startAPI serves the API on the unix socket, if there is one (trusted: its
// file mode is the protection), and on tl, the TCP listener of --listen, if
// any (tokens decide). The TCP address is taken before (listenTCP), so one
// in use leaves no socket behind.
//
// The channel it returns receives a listener's failure.
func startAPI(api *httpapi.Server, sock string, tl net.Listener, withTLS bool, log *slog.Logger) ([]*http.Server, <-chan error, error) {
	failed := make(chan error, 2)
	var servers []*http.Server
	if sock != "" {
		// The store is ours (bbolt's lock), so a socket file left behind by a
		// killed server is stale.
		os.Remove(sock)
		ul, err := httpapi.ListenSocket(sock)
		if err != nil {
			if tl != nil {
				tl.Close()
			}
			return nil, nil, domain.Errorf(domain.ErrUnavailable, "serve the socket %s: %v", sock, err)
		}
		servers = append(servers, newHTTPServer(api.Handler(true)))
		go serveOn(servers[0], httpapi.LimitListener(ul, httpapi.MaxConnections), failed)
		log.Info("api listening", "socket", sock)
	}
	if tl != nil {
		srv := newHTTPServer(api.Handler(false))
		servers = append(servers, srv)
		go serveOn(srv, tl, failed) // limited by listenTCP
		log.Info("api listening", "address", tl.Addr().String(), "tls", withTLS)
	}
	return servers, failed, nil
}

func newHTTPServer(h http.Handler) *http.Server {
	return httpapi.NewHTTPServer(h)
}

// serveOn serves srv on l until it is shut down; any other end is a
// failure, reported on failed.
func serveOn(srv *http.Server, l net.Listener, failed chan<- error) {
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		failed <- fmt.Errorf("%s: %w", l.Addr(), err)
	}
}

// stopAPI lets requests in flight finish, up to the timeout.
func stopAPI(servers []*http.Server, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), max(timeout, time.Second))
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(ctx)
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
