// Package httpapi serves the JSON API of §6 over the admin service: the same
// operations the CLI runs locally, with bearer-token roles, the error
// envelope, cursor paging, and an audit entry for every mutating request,
// refused ones included.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// Auditor records audit entries for requests refused before they reached
// the service.
type Auditor interface {
	RecordAudit(ctx context.Context, e *domain.AuditEntry) error
}

// Options configure a server.
type Options struct {
	Service admin.Service
	Auditor Auditor
	Tokens  []config.Token
	// MaxPayload bounds a message payload; request bodies may be a little larger.
	MaxPayload int64
	// Ready reports whether the store and engine are up (/readyz).
	Ready   func(ctx context.Context) error
	Metrics http.Handler
	Logger  *slog.Logger
	// Now is the clock of audit entries and of the count of refusals;
	// tests may replace it.
	Now func() time.Time
}

// Server is the HTTP API.
type Server struct {
	opts     Options
	tokens   *tokenSet
	routes   []route
	refusals *refusalLog
}

// route is one endpoint: what it needs and what it does.
type route struct {
	Method, Pattern string
	// perm is what the caller needs; zero means no auth (health checks).
	perm perm
	// permFor, if set, picks the permission from the request (actions).
	permFor  func(r *http.Request) perm
	mutating bool
	handle   func(w http.ResponseWriter, r *http.Request) error
}

// New builds a server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = domain.DefaultMaxPayload
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Now().UTC() }
	}
	s := &Server{opts: opts, tokens: newTokenSet(opts.Tokens), refusals: newRefusalLog()}
	s.routes = s.table()
	return s
}

// Routes lists "METHOD PATTERN" of every route, for the OpenAPI check.
func (s *Server) Routes() []string {
	out := make([]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = r.Method + " " + r.Pattern
	}
	return out
}

// Handler returns the API. With trusted (the unix socket, protected by its
// file mode) every request is allowed as admin; otherwise bearer tokens
// decide, and no configured token means every request but the health checks
// is refused.
func (s *Server) Handler(trusted bool) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes {
		mux.HandleFunc(rt.Method+" "+rt.Pattern, s.wrap(rt, trusted))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, domain.NotFoundf("no route %s %s; see /v1/openapi.json", r.Method, r.URL.Path))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would answer a path with . or .. segments or a double
		// slash with a redirect to its clean form, which a client then
		// follows as another request (a POST turning into a GET). Every
		// answer of the API is JSON: such a path is refused instead.
		if p := r.URL.EscapedPath(); p != cleanPath(p) {
			err := domain.Invalidf("path %q has an empty, . or .. segment; names that are . or .. cannot be given in a path", p)
			if mutatingMethod(r.Method) {
				s.record(r, s.callerOf(r, trusted), domain.AuditError, err.Error())
			}
			writeError(w, err)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// mutatingMethod reports whether a request of this method asks for a change.
func mutatingMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// callerOf is who made a request: everyone on the socket, a token's holder
// on TCP, or nil for no valid token.
func (s *Server) callerOf(r *http.Request, trusted bool) *caller {
	if trusted {
		return &caller{name: socketActor(r), all: true}
	}
	return s.tokens.lookup(r)
}

// Close writes the counts of refusals not yet recorded; call it before the
// store closes.
func (s *Server) Close() {
	s.refusals.mu.Lock()
	entries := s.refusals.sweep(s.opts.Now(), true)
	s.refusals.mu.Unlock()
	s.write(context.Background(), entries)
}

// cleanPath is the path the mux would redirect to: path.Clean, keeping a
// trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

func (s *Server) wrap(rt route, trusted bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		need := rt.perm
		if rt.permFor != nil {
			need = rt.permFor(r)
		}
		ctx := r.Context()
		var c *caller
		if need != 0 {
			c = s.callerOf(r, trusted)
			switch {
			case c == nil:
				// Refusals without a token: a mutating request's is audited.
				const msg = "a valid bearer token is required (Authorization: Bearer TOKEN)"
				if rt.mutating {
					s.record(r, nil, domain.AuditDenied, msg)
				}
				writeJSON(w, http.StatusUnauthorized, wire.ErrorBody{Error: wire.ErrorDetail{Code: "unauthorized", Message: msg}})
				return
			case !c.may(need):
				// A token-authenticated refusal is audited, whatever was asked.
				msg := "token " + c.name + " may not " + r.Method + " " + r.URL.Path
				s.record(r, c, domain.AuditDenied, msg)
				writeJSON(w, http.StatusForbidden, wire.ErrorBody{Error: wire.ErrorDetail{Code: "forbidden", Message: msg}})
				return
			}
			ctx = admin.WithCaller(ctx, admin.Caller{Actor: c.name, Source: source(r)})
		}
		if err := rt.handle(w, r.WithContext(ctx)); err != nil {
			var rf refusal
			if rt.mutating && errors.As(err, &rf) {
				s.record(r, c, domain.AuditError, err.Error())
			}
			writeError(w, err)
		}
	}
}

// refusal is an error of a mutating request that the server refused before
// the service saw it, such as a malformed body. The service audits the
// requests it refuses itself; wrap audits these.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// record writes the audit entry of a request refused before it reached
// the service. c is who made it; nil means no valid token, and then the
// refusal is counted per source address and recorded at most once a
// window (refusals.go). Every entry is bounded.
func (s *Server) record(r *http.Request, c *caller, result, detail string) {
	e := &domain.AuditEntry{
		At: s.opts.Now(), Actor: "anonymous", Source: source(r), Action: r.Method + " " + r.URL.Path,
		Targets: []string{}, Result: result, Detail: detail,
	}
	e.Bound()
	entries := []*domain.AuditEntry{e}
	if c != nil {
		e.Actor = c.name
	} else {
		entries = s.refusals.note(e)
	}
	s.write(context.WithoutCancel(r.Context()), entries)
}

func (s *Server) write(ctx context.Context, entries []*domain.AuditEntry) {
	if s.opts.Auditor == nil {
		return
	}
	for _, e := range entries {
		if err := s.opts.Auditor.RecordAudit(ctx, e); err != nil {
			s.opts.Logger.Error("recording a refused request failed", "err", err)
		}
	}
}

// socketActor is who a request on the unix socket names as its operator
// (wire.ActorHeader): the socket admits only its owner, who may name
// itself, so that the history and the audit log name the operator and not
// the socket. A missing or unprintable name leaves "socket".
func socketActor(r *http.Request) string {
	a := r.Header.Get(wire.ActorHeader)
	if a == "" || len(a) > 100 || strings.ContainsFunc(a, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return "socket"
	}
	return a
}

func source(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	if r.RemoteAddr == "" || r.RemoteAddr == "@" {
		return "unix"
	}
	return r.RemoteAddr
}

// writeError sends the error envelope with the status of its kind.
func writeError(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, "internal"
	switch {
	case errors.Is(err, domain.ErrTooLarge):
		status, code = http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, domain.ErrInvalid):
		status, code = http.StatusBadRequest, "invalid"
	case errors.Is(err, domain.ErrNotFound):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, domain.ErrConflict):
		status, code = http.StatusConflict, "conflict"
	case errors.Is(err, domain.ErrPermission):
		status, code = http.StatusForbidden, "forbidden"
	case errors.Is(err, domain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		status, code = http.StatusServiceUnavailable, "unavailable"
	}
	detail := wire.ErrorDetail{Code: code, Message: err.Error(), Hint: domain.HintOf(err)}
	var rerr *admin.RequestError
	if errors.As(err, &rerr) {
		detail.Index = &rerr.Index
	}
	writeJSON(w, status, wire.ErrorBody{Error: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
