package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// The roles of §6, written out from the spec rather than taken from the
// code under test.
var (
	public      []string // health checks: no token needed
	readers     = []string{"monitor", "operator", "admin"}
	operators   = []string{"operator", "admin"}
	admins      = []string{"admin"}
	producers   = []string{"producer"}
	txRoles     = []string{"operator", "admin", "producer"}
	everyRole   = []string{"monitor", "operator", "admin", "producer"}
	roleTokens  = map[string]string{"monitor": "tok-monitor", "operator": "tok-operator", "admin": "tok-admin", "producer": "tok-producer"}
	tokenConfig = func() []config.Token {
		var out []config.Token
		for _, role := range everyRole {
			out = append(out, config.Token{Name: "ops-" + role, Role: role, SHA256: HashToken(roleTokens[role])})
		}
		return out
	}()
)

// authBundle is a server over a real local service on a bbolt store, with
// one message in each status the routes need.
type authBundle struct {
	svc    *local.Service
	api    *Server
	st     store.Store
	srv    *httptest.Server // --listen: tokens decide
	socket *httptest.Server // the unix socket: trusted
	ndlv   string           // an NDLV message
	pend   string           // a PEND message
}

func setupAuth(t *testing.T, tokens []config.Token) *authBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{Receivers: []string{"WMS"}})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })

	ctx := context.Background()
	msgs, err := svc.Send(ctx, []domain.SendRequest{
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("x")},
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("y"), Prepare: true},
	})
	require.NoError(t, err)
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		for _, to := range []domain.Status{domain.StatusDLNG, domain.StatusNDLV} {
			from := domain.StatusTBDL
			if to == domain.StatusNDLV {
				from = domain.StatusDLNG
			}
			if _, err := w.Transition(store.TransitionParams{ID: msgs[0].ID, From: []domain.Status{from}, To: to,
				History: domain.HistoryEntry{Actor: "engine"}}); err != nil {
				return err
			}
		}
		return nil
	}))

	api := New(Options{
		Service: svc, Auditor: svc, Tokens: tokens,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "queuectl_up 1\n") }),
	})
	b := &authBundle{svc: svc, api: api, st: st, ndlv: msgs[0].ID, pend: msgs[1].ID,
		srv: httptest.NewServer(api.Handler(false)), socket: httptest.NewServer(api.Handler(true))}
	t.Cleanup(b.srv.Close)
	t.Cleanup(b.socket.Close)
	return b
}

// endpoint is one request to make, and who may make it.
type endpoint struct {
	method, path, body string
	roles              []string // nil: public
	mutating           bool
	want               int // the status an allowed request gets
	route              string
	// bodyFn, if set, makes each request's body: one that must differ
	// from the last (a payload edit).
	bodyFn func() string
}

func (b *authBundle) endpoints() []endpoint {
	edits := 0
	act := func(action, target string, roles []string) endpoint {
		return endpoint{method: "POST", path: "/v1/actions/" + action, body: `{"targets":["` + target + `"]}`,
			roles: roles, mutating: true, want: 200, route: "POST /v1/actions/{action...}"}
	}
	return []endpoint{
		{method: "GET", path: "/healthz", roles: public, want: 200, route: "GET /healthz"},
		{method: "GET", path: "/readyz", roles: public, want: 200, route: "GET /readyz"},
		{method: "GET", path: "/metrics", roles: readers, want: 200, route: "GET /metrics"},
		{method: "GET", path: "/v1/openapi.json", roles: everyRole, want: 200, route: "GET /v1/openapi.json"},
		{method: "GET", path: "/v1/whoami", roles: everyRole, want: 200, route: "GET /v1/whoami"},
		{method: "GET", path: "/v1/queues", roles: readers, want: 200, route: "GET /v1/queues"},
		{method: "GET", path: "/v1/queues/XBTI0000", roles: readers, want: 200, route: "GET /v1/queues/{name}"},
		{method: "GET", path: "/v1/queues/XBTI0000/messages", roles: readers, want: 200, route: "GET /v1/queues/{name}/messages"},
		{method: "GET", path: "/v1/messages?status=NDLV", roles: readers, want: 200, route: "GET /v1/messages"},
		{method: "POST", path: "/v1/messages", roles: producers, mutating: true, want: 201, route: "POST /v1/messages",
			body: `{"messages":[{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"eA=="}]}`},
		{method: "GET", path: "/v1/messages/" + b.ndlv, roles: readers, want: 200, route: "GET /v1/messages/{id}"},
		{method: "GET", path: "/v1/messages/" + b.ndlv + "/payload", roles: operators, want: 200, route: "GET /v1/messages/{id}/payload"},
		{method: "PUT", path: "/v1/messages/" + b.ndlv + "/payload", roles: operators, mutating: true, want: 200,
			route: "PUT /v1/messages/{id}/payload", bodyFn: func() string { edits++; return fmt.Sprintf("fix %d", edits) }},
		act("message.resend", b.ndlv, operators),
		act("message.fail", b.ndlv, operators),
		act("blacklist.release", b.ndlv, operators),
		act("blacklist.fail", b.ndlv, operators),
		act("queue.stop", "XBTI0000", operators),
		act("queue.start", "XBTI0000", operators),
		act("queue.delete", "XBTI0000", operators),
		act("tx.commit", b.pend, txRoles),
		act("tx.rollback", b.pend, txRoles),
		{method: "GET", path: "/v1/tuning", roles: readers, want: 200, route: "GET /v1/tuning"},
		{method: "PUT", path: "/v1/tuning/EO_OUTBOUND_PARALLEL", body: `{"sub":"WMS","value":2}`, roles: admins,
			mutating: true, want: 200, route: "PUT /v1/tuning/{param...}"},
		{method: "DELETE", path: "/v1/tuning/EO_OUTBOUND_PARALLEL?sub=WMS", roles: admins, mutating: true, want: 200,
			route: "DELETE /v1/tuning/{param...}"},
		{method: "GET", path: "/v1/audit", roles: readers, want: 200, route: "GET /v1/audit"},
		{method: "GET", path: "/v1/nodes", roles: readers, want: 200, route: "GET /v1/nodes"},
		{method: "POST", path: "/v1/audit/refusals", body: `{"action":"purge","reason":"--older-than \"-1h\" must not be negative"}`,
			roles: everyRole, want: 204, route: "POST /v1/audit/refusals"},
		{method: "GET", path: "/v1/names?kind=queue", roles: readers, want: 200, route: "GET /v1/names"},
		{method: "POST", path: "/v1/purge", body: `{"dry_run":true}`, roles: admins, mutating: true, want: 200, route: "POST /v1/purge"},
		{method: "GET", path: "/v1/eoio", roles: readers, want: 200, route: "GET /v1/eoio"},
		{method: "POST", path: "/v1/eoio/switch", body: `{"queues":4}`, roles: admins, mutating: true, want: 200,
			route: "POST /v1/eoio/switch"},
	}
}

// do makes one request with an Authorization header (none when empty) and
// returns the status and the decoded error envelope, if any.
func do(t *testing.T, srv *httptest.Server, e endpoint, auth string) (int, wire.ErrorDetail) {
	t.Helper()
	body := e.body
	if e.bodyFn != nil {
		body = e.bodyFn()
	}
	req, err := http.NewRequest(e.method, srv.URL+e.path, strings.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env wire.ErrorBody
	if resp.StatusCode >= 400 {
		require.NoError(t, json.Unmarshal(raw, &env), "%s %s: the error envelope: %s", e.method, e.path, raw)
	}
	return resp.StatusCode, env.Error
}

// deniedEntry is an audit entry the test expects for a refused mutating request.
type deniedEntry struct{ actor, action string }

// auditedAs is the action a refusal of e is recorded under: that of the
// action the request would have been, or its method and path for a
// request of no action.
func auditedAs(e endpoint) string {
	path := strings.Split(e.path, "?")[0]
	if !e.mutating {
		return e.method + " " + path
	}
	switch e.route {
	case "POST /v1/actions/{action...}":
		return strings.TrimPrefix(path, "/v1/actions/")
	case "POST /v1/messages":
		return "send"
	case "PUT /v1/tuning/{param...}":
		return "tune.set"
	case "DELETE /v1/tuning/{param...}":
		return "tune.unset"
	case "POST /v1/purge":
		return "purge"
	case "POST /v1/eoio/switch":
		return "eoio.switch"
	}
	return e.method + " " + path
}

func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	eps := b.endpoints()

	// Every route of the table is in the matrix.
	covered := map[string]bool{}
	for _, e := range eps {
		covered[e.route] = true
	}
	for _, r := range New(Options{}).Routes() {
		require.True(t, covered[r], "route %s is in the matrix", r)
	}

	var want []deniedEntry
	anonymous := 0
	for _, e := range eps {
		name := e.method + " " + e.path
		callers := []struct{ actor, auth string }{
			{"anonymous", ""},
			{"anonymous", "Bearer not-a-token"},
			{"anonymous", "Bearer " + roleTokens["admin"] + "x"},
			{"anonymous", "Basic " + roleTokens["admin"]},
			{"anonymous", "Bearer"},
		}
		for _, role := range everyRole {
			callers = append(callers, struct{ actor, auth string }{"ops-" + role, "Bearer " + roleTokens[role]})
		}
		for _, c := range callers {
			got, env := do(t, b.srv, e, c.auth)
			role := strings.TrimPrefix(c.actor, "ops-")
			switch {
			case e.roles == nil || slices.Contains(e.roles, role):
				require.Equal(t, e.want, got, "%s as %s: allowed", name, c.actor)
			case c.actor == "anonymous":
				require.Equal(t, http.StatusUnauthorized, got, "%s with %q", name, c.auth)
				require.Equal(t, "unauthorized", env.Code)
				// Refusals without a token are recorded once a minute per
				// address, with a count of the rest: here, the first.
				if e.mutating {
					if anonymous == 0 {
						want = append(want, deniedEntry{c.actor, auditedAs(e)})
					}
					anonymous++
				}
			default:
				require.Equal(t, http.StatusForbidden, got, "%s as %s", name, c.actor)
				require.Equal(t, "forbidden", env.Code)
				require.Contains(t, env.Message, "token "+c.actor+" (role "+role+") may not run '")
				require.Contains(t, env.Message, "("+e.method+" "+strings.Split(e.path, "?")[0]+"): it needs role ")
				// A token's refusals are recorded, whatever it asked.
				want = append(want, deniedEntry{c.actor, auditedAs(e)})
			}
		}
	}

	// Every refusal with a token, and the first without, and nothing else,
	// is in the audit log as denied, with who asked and from where.
	denied := func() []*domain.AuditEntry {
		var out []*domain.AuditEntry
		require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
			if e.Result == domain.AuditDenied {
				require.Equal(t, "127.0.0.1", e.Source, "the source address of %s", e.Action)
				require.NotEmpty(t, e.Detail)
				require.False(t, e.At.IsZero())
				out = append(out, e)
			}
			return nil
		}))
		return out
	}
	var got []deniedEntry
	for _, e := range denied() {
		got = append(got, deniedEntry{e.Actor, e.Action})
	}
	require.Equal(t, want, got)
	// The first anonymous refusal, and the roles refused: eleven reading
	// routes to the producer, payloads to 2 roles, a payload edit to 2,
	// send 3, seven operator actions 2 each, two tx actions 1 each, tune,
	// untune, purge and eoio switch 3 each.
	require.Len(t, got, 1+11+2+2+3+7*2+2*1+4*3)
	// 15 mutating endpoints × 5 anonymous callers: the others are counted,
	// and the count is written when the server closes.
	require.Equal(t, 15*5, anonymous)
	b.api.Close()
	all := denied()
	require.Len(t, all, len(got)+1)
	summary := all[len(all)-1]
	require.Equal(t, "anonymous", summary.Actor)
	require.Contains(t, summary.Detail, fmt.Sprintf("%d more requests without a valid token were refused from 127.0.0.1", 15*5-1))

	// The allowed mutating requests are audited under the token's name.
	var actors []string
	require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
		if e.Result != domain.AuditDenied && !slices.Contains(actors, e.Actor) {
			actors = append(actors, e.Actor)
		}
		return nil
	}))
	// (The monitor only reported a refusal of its own.)
	require.ElementsMatch(t, []string{"ops-monitor", "ops-operator", "ops-admin", "ops-producer"}, actors)
}

func TestTrustedSocketAllowsEverything(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	for _, e := range b.endpoints() {
		for _, auth := range []string{"", "Bearer not-a-token", "Bearer " + roleTokens["monitor"]} {
			if e.method == "DELETE" {
				// Each unset needs a value to unset (the last one removed it).
				require.NoError(t, b.st.Update(context.Background(), func(w store.Writer) error {
					return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Sub: "WMS", Value: 2})
				}))
			}
			if e.route == "POST /v1/eoio/switch" {
				// Each switch needs another number than the last one made.
				require.NoError(t, b.st.Update(context.Background(), func(w store.Writer) error {
					return w.SetEOIO(domain.DefaultEOIO)
				}))
			}
			got, env := do(t, b.socket, e, auth)
			require.Equal(t, e.want, got, "%s %s on the socket with %q: %+v", e.method, e.path, auth, env)
		}
	}
	var actors []string
	require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
		require.NotEqual(t, domain.AuditDenied, e.Result)
		actors = append(actors, e.Actor)
		return nil
	}))
	require.NotEmpty(t, actors)
	for _, a := range actors {
		require.Equal(t, "socket", a)
	}
}

func TestNoTokensConfiguredRefusesAllButHealthChecksAndMetrics(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, nil)
	for _, e := range b.endpoints() {
		for _, auth := range []string{"", "Bearer " + roleTokens["admin"]} {
			got, _ := do(t, b.srv, e, auth)
			if e.roles == nil {
				require.Equal(t, e.want, got, "%s %s", e.method, e.path)
				continue
			}
			require.Equal(t, http.StatusUnauthorized, got, "%s %s with %q", e.method, e.path, auth)
		}
	}
}

func TestBearerSchemeIgnoresCase(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	e := endpoint{method: "GET", path: "/v1/queues"}
	for _, auth := range []string{"Bearer tok-monitor", "bearer tok-monitor", "BEARER tok-monitor"} {
		got, _ := do(t, b.srv, e, auth)
		require.Equal(t, http.StatusOK, got, auth)
	}
	for _, auth := range []string{"Bearer  tok-monitor", "Bearer tok-monitorx", "Bearertok-monitor", "tok-monitor"} {
		got, _ := do(t, b.srv, e, auth)
		require.Equal(t, http.StatusUnauthorized, got, "%q", auth)
	}
}

func TestServerKeepsOnlyTokenHashes(t *testing.T) {
	t.Parallel()
	// The configuration has no field that could hold a token itself (the
	// creation time is a time, checked as one).
	var fields []string
	for f := range reflect.TypeFor[config.Token]().Fields() {
		fields = append(fields, f.Name)
	}
	require.Equal(t, []string{"Name", "Role", "SHA256", "Created"}, fields)

	// §8's example: the SHA-256 of "test" in hex.
	require.Equal(t, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", HashToken("test"))
	sum := sha256.Sum256([]byte(roleTokens["admin"]))
	require.Equal(t, hex.EncodeToString(sum[:]), HashToken(roleTokens["admin"]))

	// Nothing the server keeps holds a token.
	s := New(Options{Tokens: tokenConfig})
	dump := fmt.Sprintf("%#v %#v", *s.tokens, s.opts)
	for _, tok := range roleTokens {
		require.NotContains(t, dump, tok)
	}
	require.Len(t, s.tokens.hashes, len(tokenConfig))

	// A hash in upper case or with spaces around it works; a malformed one
	// grants nothing.
	ts := newTokenSet([]config.Token{
		{Name: "upper", Role: "monitor", SHA256: " " + strings.ToUpper(HashToken("u")) + " "},
		{Name: "short", Role: "admin", SHA256: HashToken("s")[:10]},
		{Name: "nothex", Role: "admin", SHA256: strings.Repeat("z", 64)},
	})
	require.Len(t, ts.hashes, 1)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer u")
	c, why := ts.lookup(r)
	require.NotNil(t, c)
	require.Empty(t, why)
	require.Equal(t, "upper", c.name)
	r.Header.Set("Authorization", "Bearer s")
	c, why = ts.lookup(r)
	require.Nil(t, c)
	require.Equal(t, unknownToken, why)
}

// TestUnauthorized: a request without a token, with a header that is not a
// bearer token, and with a token the server does not know each hear why,
// with the challenge of RFC 6750.
func TestUnauthorized(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	for auth, want := range map[string]struct{ msg, challenge string }{
		"":                   {"a bearer token is required (Authorization: Bearer TOKEN)", `Bearer realm="queuectl"`},
		"Basic dXNlcjpwdw==": {"the Authorization header is not a bearer token (Authorization: Bearer TOKEN)", `Bearer realm="queuectl"`},
		"Bearer wrong":       {"the bearer token is not valid: the server has no token with its SHA-256", `Bearer realm="queuectl", error="invalid_token"`},
	} {
		req, err := http.NewRequest("GET", b.srv.URL+"/v1/queues", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		var env wire.ErrorBody
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, auth)
		require.Equal(t, want.challenge, resp.Header.Get("WWW-Authenticate"), auth)
		require.Equal(t, want.msg, env.Error.Message, auth)
	}
}

// TestForbiddenNamesTheCommand: a refusal names the command the request
// makes and the roles that may make it, not only its route.
func TestForbiddenNamesTheCommand(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	for _, c := range []struct {
		e    endpoint
		role string
		want string
	}{
		{endpoint{method: "POST", path: "/v1/eoio/switch", body: `{"queues":4}`}, "operator",
			"token ops-operator (role operator) may not run 'eoio switch' (POST /v1/eoio/switch): it needs role admin"},
		{endpoint{method: "GET", path: "/v1/messages/" + b.ndlv + "/payload"}, "monitor",
			"token ops-monitor (role monitor) may not run 'message payload' (GET /v1/messages/" + b.ndlv + "/payload): it needs role operator or admin"},
		{endpoint{method: "POST", path: "/v1/actions/tx.commit", body: `{"targets":["` + b.pend + `"]}`}, "monitor",
			"token ops-monitor (role monitor) may not run 'tx commit' (POST /v1/actions/tx.commit): it needs role operator, admin or producer"},
		{endpoint{method: "POST", path: "/v1/messages", body: `{"messages":[]}`}, "admin",
			"token ops-admin (role admin) may not run 'send' (POST /v1/messages): it needs role producer"},
	} {
		got, env := do(t, b.srv, c.e, "Bearer "+roleTokens[c.role])
		require.Equal(t, http.StatusForbidden, got)
		require.Equal(t, c.want, env.Message)
	}
}

// TestMethodNotAllowed: a path the API serves, asked with a method it does
// not take, is 405 with the methods it takes and a code of its own, as the
// document's Error schema describes; a path it does not serve is 404.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	errSchema := componentSchema(t, doc, "Error")
	b := setupAuth(t, tokenConfig)
	for path, allow := range map[string]string{
		"/v1/queues":          "GET, HEAD",
		"/v1/messages":        "GET, HEAD, POST",
		"/v1/eoio/switch":     "POST",
		"/v1/tuning/EO_X":     "PUT, DELETE",
		"/v1/queues/XBTI0000": "GET, HEAD",
	} {
		for _, srv := range []*httptest.Server{b.srv, b.socket} {
			req, err := http.NewRequest("PATCH", srv.URL+path, nil)
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			var env wire.ErrorBody
			require.NoError(t, json.Unmarshal(raw, &env))
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
			require.Equal(t, allow, resp.Header.Get("Allow"), path)
			require.Equal(t, "method_not_allowed", env.Error.Code, path)
			require.Equal(t, "method PATCH is not allowed for "+path+"; it takes "+allow, env.Error.Message)
			var v any
			require.NoError(t, json.Unmarshal(raw, &v))
			requireValid(t, errSchema, v, "PATCH "+path)
		}
	}
	got, env := do(t, b.socket, endpoint{method: "GET", path: "/v1/nothing"}, "")
	require.Equal(t, http.StatusNotFound, got)
	require.Equal(t, "not_found", env.Code)
}

// TestTokenLookupIsConstantTime reads auth.go: the presented token's hash
// is compared with every configured hash by subtle.ConstantTimeCompare,
// and the loop neither leaves early nor compares in any other way, so the
// time a lookup takes tells nothing about which hash came close.
func TestTokenLookupIsConstantTime(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "auth.go", nil, 0)
	require.NoError(t, err)
	var lookup *ast.FuncDecl
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "lookup" {
			lookup = fn
		}
	}
	require.NotNil(t, lookup, "auth.go has the lookup method")

	var loops, constantTime int
	ast.Inspect(lookup.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.RangeStmt:
			loops++
			ast.Inspect(n.Body, func(m ast.Node) bool {
				switch m := m.(type) {
				case *ast.ReturnStmt:
					t.Errorf("%s: the comparison loop returns early", fset.Position(m.Pos()))
				case *ast.BranchStmt:
					t.Errorf("%s: the comparison loop has a %s", fset.Position(m.Pos()), m.Tok)
				case *ast.BinaryExpr:
					if m.Op.String() == "==" || m.Op.String() == "!=" {
						// Only the result of ConstantTimeCompare and the found flag may be compared.
						call, isCall := m.X.(*ast.CallExpr)
						ident, isIdent := m.X.(*ast.Ident)
						ok := (isCall && selector(call.Fun) == "subtle.ConstantTimeCompare") || (isIdent && ident.Name == "found")
						require.True(t, ok, "%s: a comparison other than ConstantTimeCompare", fset.Position(m.Pos()))
					}
				}
				return true
			})
		case *ast.CallExpr:
			switch selector(n.Fun) {
			case "subtle.ConstantTimeCompare":
				constantTime++
			case "bytes.Equal", "bytes.Compare", "strings.EqualFold", "hmac.Equal":
				if selector(n.Fun) != "strings.EqualFold" || !isSchemeCheck(n) {
					t.Errorf("%s: %s compares tokens", fset.Position(n.Pos()), selector(n.Fun))
				}
			}
		}
		return true
	})
	require.Equal(t, 1, loops, "one loop over the configured hashes")
	require.Equal(t, 1, constantTime, "the hashes are compared by subtle.ConstantTimeCompare")
}

func selector(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok {
			return x.Name + "." + s.Sel.Name
		}
	}
	return ""
}

// isSchemeCheck reports whether a strings.EqualFold call compares the
// Authorization scheme with "Bearer", which is no secret.
func isSchemeCheck(call *ast.CallExpr) bool {
	for _, a := range call.Args {
		if lit, ok := a.(*ast.BasicLit); ok && lit.Value == `"Bearer"` {
			return true
		}
	}
	return false
}
