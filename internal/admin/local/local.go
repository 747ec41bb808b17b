// Package local implements admin.Service directly on a store, for embedded
// mode and for the server behind the HTTP API.
package local

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// Options configure a local service.
type Options struct {
	// Role is the node role whose letter names inbound queues (§3).
	Role domain.Role
	// MaxPayload is engine.max_payload in bytes.
	MaxPayload int64
	// Actor is who the history and audit log name for changes made here.
	Actor string
	// Source is the audit log's source address of changes made here.
	Source string
	// Receivers are the configured receivers (receivers: in the
	// configuration): a receiver's own EO_OUTBOUND_PARALLEL must name one.
	Receivers []string
	// RouteAtSend is set where an engine runs in the same process (serve,
	// bench): a send then routes what it stores in its own transaction when
	// the inbound queue would start it at once and a receiver is found
	// (§3), by Routes, the routing rules; else the engine routes it.
	RouteAtSend bool
	Routes      []placement.Rule
	// LeaseTTL is cluster.lease_ttl: a node whose heartbeat is older is
	// dead (node list); default 10s.
	LeaseTTL time.Duration
	// Now and Rand may be replaced in tests; they default to the clock and a random source.
	Now  func() time.Time
	Rand func(n int) int
}

// Service is the local admin service.
type Service struct {
	st     store.Store
	opts   Options
	placer placement.Placer
	router *placement.Router
}

var _ admin.Service = (*Service)(nil)

// New returns a service over st. It owns st: Close closes it.
func New(st store.Store, opts Options) *Service {
	if opts.Role == "" {
		opts.Role = domain.RoleCentral
	}
	if opts.MaxPayload == 0 {
		opts.MaxPayload = domain.DefaultMaxPayload
	}
	if opts.Actor == "" {
		opts.Actor = "local"
	}
	if opts.Source == "" {
		opts.Source = "local"
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Now().UTC() }
	}
	if opts.Rand == nil {
		opts.Rand = rand.IntN
	}
	placer := placement.Placer{Role: opts.Role, Rand: opts.Rand}
	return &Service{st: st, opts: opts, placer: placer, router: &placement.Router{Placer: placer, Rules: opts.Routes}}
}

// Close closes the store.
func (s *Service) Close() error { return s.st.Close() }

func (s *Service) view(ctx context.Context, fn func(store.Reader) error) error {
	return s.st.View(ctx, fn)
}

// as returns the service acting for the caller a request's context names
// (the HTTP API's token), or s itself.
func (s *Service) as(ctx context.Context) *Service {
	c, ok := admin.CallerFrom(ctx)
	if !ok {
		return s
	}
	cp := *s
	cp.opts.Actor, cp.opts.Source = c.Actor, c.Source
	return &cp
}
