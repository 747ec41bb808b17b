// Package httpapi serves the JSON API of §6 over the admin service: the same
// operations the CLI runs locally, with bearer-token roles, the error
// envelope, cursor paging, and an audit entry for every mutating request,
// refused ones included.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
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
	// BodyTimeout is how long a request's body may take to arrive;
	// zero means the default, BodyTimeout.
	BodyTimeout time.Duration
}

// Server is the HTTP API.
type Server struct {
	opts     Options
	tokens   *tokenSet
	routes   []route
	refusals *refusalLog

	// noSpaceMu guards when a full disk was last logged and how many
	// requests ran into it since.
	noSpaceMu      sync.Mutex
	noSpaceLogged  time.Time
	noSpaceRefused int
}

// route is one endpoint: what it needs and what it does.
type route struct {
	Method, Pattern string
	// cmd is the queuectl command that makes the request, for a refusal
	// to name; an action's is its name ("message.resend" → "message
	// resend"). A route of a command needs what the command needs
	// (admin.CommandPermission); one that serves no command names its
	// request ("GET /metrics") and its perm.
	cmd string
	// perm is what the caller needs; zero means no auth (health checks).
	perm perm
	// permFor, if set, picks the permission from the request (actions).
	permFor  func(r *http.Request) perm
	mutating bool
	handle   func(w http.ResponseWriter, r *http.Request) error
}

// command is the queuectl command that makes a request of the route.
func (rt route) command(r *http.Request) string {
	if rt.cmd == "" {
		return admin.Action(r.PathValue("action")).Command()
	}
	return rt.cmd
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
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = BodyTimeout
	}
	s := &Server{opts: opts, tokens: newTokenSet(opts.Tokens), refusals: newRefusalLog()}
	s.routes = s.table()
	for i, rt := range s.routes {
		if p, ok := admin.CommandPermission(rt.cmd); ok {
			s.routes[i].perm = p
		}
	}
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
		// A path the API serves, asked with another method: 405 with the
		// methods it takes (RFC 9110 §15.5.6), not 404. The catch-all
		// pattern matches every method, so the mux never says so itself.
		if allow := s.allowed(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorBody{Error: wire.ErrorDetail{Code: "method_not_allowed",
				Message: fmt.Sprintf("method %s is not allowed for %s; it takes %s", r.Method, r.URL.Path, strings.Join(allow, ", "))}})
			return
		}
		writeError(w, domain.NotFoundf("no route %s %s; see /v1/openapi.json", r.Method, r.URL.Path))
	})
	return s.limited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux would answer a path with . or .. segments or a double
		// slash with a redirect to its clean form, which a client then
		// follows as another request (a POST turning into a GET). Every
		// answer of the API is JSON: such a path is refused instead.
		if p := r.URL.EscapedPath(); p != cleanPath(p) {
			err := domain.Invalidf("path %q has an empty, . or .. segment; names that are . or .. cannot be given in a path", p)
			if mutatingMethod(r.Method) {
				c, _ := s.callerOf(r, trusted)
				s.record(r, nil, c, domain.AuditError, err.Error(), nil)
			}
			writeError(w, err)
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

// allowed lists the methods the API takes for the request's path, in the
// order of RFC 9110 (HEAD with GET, which the mux serves for it).
func (s *Server) allowed(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// mutatingMethod reports whether a request of this method asks for a change.
func mutatingMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// callerOf is who made a request: everyone on the socket, a token's holder
// on TCP, or nil and why for no valid token.
func (s *Server) callerOf(r *http.Request, trusted bool) (*caller, string) {
	if trusted {
		return &caller{name: socketActor(r), all: true}, ""
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
			var why string
			c, why = s.callerOf(r, trusted)
			switch {
			case c == nil:
				// Refusals without a token: a mutating request's is audited.
				if rt.mutating {
					s.record(r, &rt, nil, domain.AuditDenied, why, nil)
				}
				// RFC 6750 §3: the scheme to authenticate with, and for a
				// token that was given but not accepted, why.
				challenge := `Bearer realm="queuectl"`
				if why == unknownToken {
					challenge += `, error="invalid_token"`
				}
				w.Header().Set("WWW-Authenticate", challenge)
				writeJSON(w, http.StatusUnauthorized, wire.ErrorBody{Error: wire.ErrorDetail{Code: "unauthorized", Message: why}})
				return
			case !c.may(need):
				// A token-authenticated refusal is audited, whatever was asked.
				msg := fmt.Sprintf("token %s (role %s) may not run '%s' (%s %s): it needs role %s",
					c.name, c.role, rt.command(r), r.Method, r.URL.Path, rolesWith(need))
				var body []byte
				if rt.mutating {
					body = readRefused(r)
				}
				s.record(r, &rt, c, domain.AuditDenied, msg, body)
				writeJSON(w, http.StatusForbidden, wire.ErrorBody{Error: wire.ErrorDetail{Code: "forbidden", Message: msg}})
				return
			}
			ctx = admin.WithCaller(ctx, admin.Caller{Actor: c.name, Source: source(r), Role: c.role})
		}
		if err := rt.handle(w, r.WithContext(ctx)); err != nil {
			var rf refusal
			if rt.mutating && errors.As(err, &rf) {
				s.record(r, &rt, c, domain.AuditError, err.Error(), rf.body)
			}
			if errors.Is(err, domain.ErrNoSpace) {
				s.noteNoSpace(err)
			}
			writeError(w, err)
		}
	}
}

// refusal is an error of a mutating request that the server refused before
// the service saw it, such as a malformed body. The service audits the
// requests it refuses itself; wrap audits these.
type refusal struct {
	error
	// body is the request's body, when the handler read it: it names the
	// refused action's targets.
	body []byte
}

func (r refusal) Unwrap() error { return r.error }

// record writes the audit entry of a request refused before it reached
// the service. c is who made it; nil means no valid token, and then the
// refusal is counted per source address and recorded at most once a
// window (refusals.go). Every entry is bounded. rt is the request's route
// (nil for none) and body what was read of its body: the entry names the
// action and targets the request would have had (auditAction).
func (s *Server) record(r *http.Request, rt *route, c *caller, result, detail string, body []byte) {
	action, targets := auditAction(rt, r, body)
	e := &domain.AuditEntry{
		At: s.opts.Now(), Actor: "anonymous", Source: source(r), Action: action,
		Targets: targets, Result: result, Detail: detail,
	}
	e.Bound()
	entries := []*domain.AuditEntry{e}
	switch {
	case c == nil:
		entries = s.refusals.note(e)
	case result == domain.AuditDenied:
		e.Actor = c.name
		entries = s.refusals.noteToken(e)
	default:
		e.Actor = c.name
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
	case errors.Is(err, admin.ErrVersionMismatch):
		// An edit's If-Match named a version the payload no longer has.
		status, code = http.StatusPreconditionFailed, "conflict"
	case errors.Is(err, errBodyTimeout):
		status, code = http.StatusRequestTimeout, "invalid"
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
	case errors.Is(err, domain.ErrNoSpace):
		// RFC 4918 §11.5: the server cannot store what the request needs.
		status, code = http.StatusInsufficientStorage, "unavailable"
	case errors.Is(err, domain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		status, code = http.StatusServiceUnavailable, "unavailable"
	}
	detail := wire.ErrorDetail{Code: code, Message: err.Error(), Hint: domain.HintOf(err)}
	var ferr *domain.FieldError
	if errors.As(err, &ferr) {
		detail.Field = ferr.Field
	}
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
