package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/config"
)

// openAPIDoc is the part of the document the checks read.
type openAPIDoc struct {
	OpenAPI    string                          `json:"openapi"`
	Paths      map[string]map[string]openAPIOp `json:"paths"`
	Security   []map[string][]string           `json:"security"`
	Components struct {
		SecuritySchemes map[string]struct {
			Type   string `json:"type"`
			Scheme string `json:"scheme"`
		} `json:"securitySchemes"`
		Parameters map[string]openAPIParam    `json:"parameters"`
		Schemas    map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

type openAPIOp struct {
	OperationID string                     `json:"operationId"`
	Roles       *[]string                  `json:"x-queuectl-roles"`
	ActionRoles map[string][]string        `json:"x-queuectl-action-roles"`
	Security    *[]map[string][]string     `json:"security"`
	Parameters  []openAPIParam             `json:"parameters"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

type openAPIParam struct {
	Ref    string `json:"$ref"`
	Name   string `json:"name"`
	In     string `json:"in"`
	Schema struct {
		Enum []string `json:"enum"`
	} `json:"schema"`
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	require.NoError(t, json.Unmarshal(OpenAPI, &doc), "openapi.json is JSON")
	require.Regexp(t, `^3\.\d+\.\d+$`, doc.OpenAPI)
	return &doc
}

// wildcard matches a path wildcard of a route pattern: {name} or {name...}.
var wildcard = regexp.MustCompile(`\{([a-z_]+)(?:\.\.\.)?\}`)

// docPath writes a route pattern as an OpenAPI path: {rest...} is {rest}.
func docPath(pattern string) string { return wildcard.ReplaceAllString(pattern, "{$1}") }

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	s := New(Options{})

	routes := map[string]bool{}
	for _, r := range s.Routes() {
		method, pattern, ok := strings.Cut(r, " ")
		require.True(t, ok)
		key := strings.ToLower(method) + " " + docPath(pattern)
		routes[key] = true
		op, ok := doc.Paths[docPath(pattern)][strings.ToLower(method)]
		require.True(t, ok, "route %s is documented", r)
		require.NotEmpty(t, op.OperationID, r)
		require.NotEmpty(t, op.Responses, r)
	}
	ids := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			require.True(t, routes[method+" "+path], "documented %s %s is a route", strings.ToUpper(method), path)
			require.False(t, ids[op.OperationID], "operationId %s is unique", op.OperationID)
			ids[op.OperationID] = true
		}
	}
	require.Len(t, ids, len(s.Routes()))
}

func TestOpenAPIPathParameters(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	for path, ops := range doc.Paths {
		var want []string
		for _, m := range wildcard.FindAllStringSubmatch(path, -1) {
			want = append(want, m[1])
		}
		for method, op := range ops {
			var got []string
			for _, p := range op.Parameters {
				if p.Ref != "" {
					name := strings.TrimPrefix(p.Ref, "#/components/parameters/")
					resolved, ok := doc.Components.Parameters[name]
					require.True(t, ok, "%s %s: parameter %s resolves", method, path, p.Ref)
					p = resolved
				}
				if p.In == "path" {
					got = append(got, p.Name)
				}
			}
			require.ElementsMatch(t, want, got, "%s %s declares its path parameters", method, path)
		}
	}
}

// rolesFor lists the roles that grant p.
func rolesFor(p perm) []string { return admin.RolesWith(p) }

func TestOpenAPIRolesMatchTheRouteTable(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	require.Equal(t, "http", doc.Components.SecuritySchemes["bearer"].Type)
	require.Equal(t, "bearer", doc.Components.SecuritySchemes["bearer"].Scheme)
	require.Equal(t, []map[string][]string{{"bearer": {}}}, doc.Security, "every operation needs a token unless it says otherwise")

	s := New(Options{})
	for _, rt := range s.routes {
		op := doc.Paths[docPath(rt.Pattern)][strings.ToLower(rt.Method)]
		name := rt.Method + " " + rt.Pattern
		require.NotNil(t, op.Roles, "%s names its roles (x-queuectl-roles)", name)
		if rt.perm == 0 && rt.permFor == nil {
			require.Empty(t, *op.Roles, "%s needs no token", name)
			require.NotNil(t, op.Security, name)
			require.Empty(t, *op.Security, "%s overrides the bearer requirement", name)
			require.NotContains(t, op.Responses, "401", name)
			continue
		}
		require.Nil(t, op.Security, "%s keeps the bearer requirement", name)
		require.Contains(t, op.Responses, "401", name)
		require.Contains(t, op.Responses, "403", name)
		if rt.permFor == nil {
			require.ElementsMatch(t, rolesFor(rt.perm), *op.Roles, name)
			continue
		}
		// The action route: the roles depend on the action.
		actions := []admin.Action{admin.ActResend, admin.ActFail, admin.ActRelease, admin.ActBlacklistFail,
			admin.ActCommit, admin.ActRollback, admin.ActStop, admin.ActStart, admin.ActDeleteQueue}
		var enum []string
		for _, p := range op.Parameters {
			if p.Name == "action" {
				enum = p.Schema.Enum
			}
		}
		require.Len(t, enum, len(actions))
		var union []string
		for _, a := range actions {
			require.Contains(t, enum, string(a))
			r := httptest.NewRequest(rt.Method, "/v1/actions/"+string(a), nil)
			r.SetPathValue("action", string(a))
			want := rolesFor(rt.permFor(r))
			require.ElementsMatch(t, want, op.ActionRoles[string(a)], "roles of %s", a)
			for _, w := range want {
				if !slices.Contains(union, w) {
					union = append(union, w)
				}
			}
		}
		require.Len(t, op.ActionRoles, len(actions))
		require.ElementsMatch(t, union, *op.Roles, name)
	}
}

func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	var raw any
	require.NoError(t, json.Unmarshal(OpenAPI, &raw))
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					refs = append(refs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(raw)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		var at any = raw
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := at.(map[string]any)
			require.True(t, ok, "%s resolves", ref)
			at, ok = m[part]
			require.True(t, ok, "%s resolves", ref)
		}
	}
}

func TestOpenAPISchemas(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	for _, name := range []string{"Message", "Queue", "MessagePage", "QueuePage", "AuditPage", "BulkResult",
		"TuningEntry", "AuditEntry", "Error", "SendBody", "ActBody", "TuneBody", "PurgeBody", "PurgeResult"} {
		require.Contains(t, doc.Components.Schemas, name)
	}
	var envelope struct {
		Properties struct {
			Error struct {
				Properties struct {
					Code struct {
						Enum []string `json:"enum"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"error"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["Error"], &envelope))
	require.ElementsMatch(t, []string{"not_found", "conflict", "invalid", "unauthorized", "forbidden", "too_large",
		"method_not_allowed", "unavailable", "internal"}, envelope.Properties.Error.Properties.Code.Enum)

	var page struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(doc.Components.Schemas["MessagePage"], &page))
	require.ElementsMatch(t, []string{"items", "next"}, page.Required)
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	s := New(Options{Tokens: []config.Token{{Name: "feed", Role: "producer", SHA256: HashToken("p")}}})
	srv := httptest.NewServer(s.Handler(false))
	t.Cleanup(srv.Close)

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer p")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, OpenAPI, body)
}

// TestOpenAPILintRules holds the document to the rules of redocly's and
// spectral's recommended sets that a JSON-level check can state: a license
// with its URL and a contact, every tag described and declared, and every
// operation with a description and at least one 4XX answer.
func TestOpenAPILintRules(t *testing.T) {
	t.Parallel()
	var doc struct {
		Info struct {
			License struct{ Name, URL string } `json:"license"`
			Contact map[string]string          `json:"contact"`
		} `json:"info"`
		Tags []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tags"`
		Paths map[string]map[string]struct {
			Summary     string                     `json:"summary"`
			Description string                     `json:"description"`
			Tags        []string                   `json:"tags"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(OpenAPI, &doc))
	require.Equal(t, "MIT", doc.Info.License.Name, "the LICENSE file's")
	require.NotEmpty(t, doc.Info.License.URL, "info-license-url")
	require.NotEmpty(t, doc.Info.Contact, "info-contact")
	tags := map[string]bool{}
	for _, tag := range doc.Tags {
		require.NotEmpty(t, tag.Description, "tag-description: %s", tag.Name)
		tags[tag.Name] = true
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			name := strings.ToUpper(method) + " " + path
			require.NotEmpty(t, op.Summary, "%s: operation-summary", name)
			require.NotEmpty(t, op.Description, "%s: operation-description", name)
			require.NotEmpty(t, op.Tags, name)
			for _, tag := range op.Tags {
				require.True(t, tags[tag], "%s: tag %s is declared", name, tag)
			}
			var fourXX bool
			for code := range op.Responses {
				fourXX = fourXX || strings.HasPrefix(code, "4")
			}
			require.True(t, fourXX, "%s: operation-4xx-response", name)
		}
	}
}

// TestHeaderTooLarge: the 4XX the document gives the health checks is what
// the HTTP server answers them.
func TestHeaderTooLarge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(Options{}).Handler(false))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/healthz", "/readyz"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Big", strings.Repeat("x", http.DefaultMaxHeaderBytes+8192))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode, path)
		require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"), path)
	}
	doc := loadOpenAPI(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		require.Contains(t, doc.Paths[path]["get"].Responses, "431", path)
	}
}
