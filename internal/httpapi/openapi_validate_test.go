package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// apiDoc is the document as the answer checks read it twice: with
// kin-openapi, which knows OpenAPI 3.0's own keywords, and as JSON Schema
// (draft 7), which is what ajv and the validators and generators built on
// JSON Schema make of it. kin-openapi alone accepted a nullable wrapped
// around an allOf of a non-nullable schema, which JSON Schema refuses.
type apiDoc struct {
	kin  *openapi3.T
	json *jsonschema.Compiler
	raw  map[string]any
}

// strictDoc loads the document with kin-openapi and validates it as an
// OpenAPI 3.0 document, formats, patterns, defaults and examples included.
// Every object schema that lists its properties is then closed to others,
// so that a field the server sends and the document does not describe
// fails the response checks; the JSON Schema reading is closed alike.
func strictDoc(t *testing.T) *apiDoc {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableMultiError(), openapi3.EnableSchemaFormatValidation(),
		openapi3.EnableSchemaPatternValidation(), openapi3.EnableSchemaDefaultsValidation(), openapi3.EnableExamplesValidation()))
	seen := map[*openapi3.Schema]bool{}
	for _, s := range doc.Components.Schemas {
		closeSchema(s, seen)
	}

	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
	require.NoError(t, err)
	asJSONSchema(raw)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	require.NoError(t, c.AddResource(jsonSchemaURL, raw))
	return &apiDoc{kin: doc, json: c, raw: raw.(map[string]any)}
}

// jsonSchemaURL is where the JSON Schema reading of the document lives.
const jsonSchemaURL = "mem:///openapi.json"

// asJSONSchema rewrites the schemas of an OpenAPI 3.0 document in place as
// JSON Schema, as the usual converters (and ajv's nullable keyword) do:
// nullable: true adds "null" to the schema's type (and to its enum), and,
// as strictDoc does, an object schema that lists its properties admits no
// others.
func asJSONSchema(v any) {
	switch v := v.(type) {
	case map[string]any:
		if v["nullable"] == true {
			switch ty := v["type"].(type) {
			case string:
				v["type"] = []any{ty, "null"}
			case nil:
			default:
				panic(fmt.Sprintf("nullable with type %v", ty))
			}
			if enum, ok := v["enum"].([]any); ok {
				v["enum"] = append(enum, nil)
			}
		}
		delete(v, "nullable")
		if props, ok := v["properties"].(map[string]any); ok {
			if _, ok := v["additionalProperties"]; !ok {
				v["additionalProperties"] = false
			}
			// The property names are not schemas; their values are.
			for _, p := range props {
				asJSONSchema(p)
			}
		}
		for k, sub := range v {
			if k != "properties" {
				asJSONSchema(sub)
			}
		}
	case []any:
		for _, sub := range v {
			asJSONSchema(sub)
		}
	}
}

func closeSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		closed := false
		s.AdditionalProperties.Has = &closed
	}
	for _, p := range s.Properties {
		closeSchema(p, seen)
	}
	closeSchema(s.Items, seen)
	closeSchema(s.AdditionalProperties.Schema, seen)
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range group {
			closeSchema(sub, seen)
		}
	}
}

// TestOpenAPIIsValid: the served document is a valid OpenAPI 3.0 document,
// and every nullable schema states its type, as OpenAPI 3.0.3 requires of
// nullable (redocly's struct rule: "nullable" without "type" is an error).
func TestOpenAPIIsValid(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	require.Equal(t, "3.0.3", doc.kin.OpenAPI)

	var raw any
	require.NoError(t, json.Unmarshal(OpenAPI, &raw))
	var untyped []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["nullable"] == true {
				if _, ok := v["type"]; !ok {
					untyped = append(untyped, path)
				}
			}
			for k, sub := range v {
				walk(path+"/"+k, sub)
			}
		case []any:
			for i, sub := range v {
				walk(path+"/"+strconv.Itoa(i), sub)
			}
		}
	}
	walk("#", raw)
	require.Empty(t, untyped, "nullable without type")
}

// answerSchema is the schema of one answer, in both readings.
type answerSchema struct {
	kin  *openapi3.Schema
	json *jsonschema.Schema
}

// schemaOf returns the JSON schema of an operation's answer with status.
func schemaOf(t *testing.T, doc *apiDoc, method, path string, status int) answerSchema {
	t.Helper()
	item := doc.kin.Paths.Find(path)
	require.NotNil(t, item, "path %s is documented", path)
	op := item.GetOperation(method)
	require.NotNil(t, op, "%s %s is documented", method, path)
	resp := op.Responses.Status(status)
	require.NotNil(t, resp, "%s %s documents status %d", method, path, status)
	mt := resp.Value.Content.Get("application/json")
	require.NotNil(t, mt, "%s %s %d is JSON", method, path, status)

	// The same schema in the JSON Schema reading: the answer's, or the
	// shared response's it refers to.
	ptr := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
	r := doc.raw["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	if ref, ok := r["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
	}
	js, err := doc.json.Compile(jsonSchemaURL + "#" + ptr + "/content/application~1json/schema")
	require.NoError(t, err, "%s %s %d as JSON Schema", method, path, status)
	return answerSchema{kin: mt.Schema.Value, json: js}
}

// componentSchema returns a schema of the document's components.
func componentSchema(t *testing.T, doc *apiDoc, name string) answerSchema {
	t.Helper()
	ref := doc.kin.Components.Schemas[name]
	require.NotNil(t, ref, "schema %s", name)
	js, err := doc.json.Compile(jsonSchemaURL + "#/components/schemas/" + escapePointer(name))
	require.NoError(t, err, "%s as JSON Schema", name)
	return answerSchema{kin: ref.Value, json: js}
}

// escapePointer writes s as a JSON Pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// requireValid checks a JSON value (as encoding/json writes a Go value, or
// as the server answered) against a schema, read by kin-openapi and as
// JSON Schema.
func requireValid(t *testing.T, s answerSchema, v any, what string) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var decoded any
	require.NoError(t, json.Unmarshal(b, &decoded))
	require.NoError(t, s.kin.VisitJSON(decoded, openapi3.MultiErrors(), openapi3.VisitAsResponse(), openapi3.EnableFormatValidation()),
		"%s: %s", what, b)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	require.NoError(t, s.json.Validate(inst), "%s as JSON Schema: %s", what, b)
}

// TestOpenAPIDescribesTheAnswers checks what the server answers against the
// document: every field of every answer is documented, with its type.
func TestOpenAPIDescribesTheAnswers(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	b := setupAuth(t, nil)
	for _, c := range []struct {
		method, path, doc string
		body              string
		status            int
	}{
		{"GET", "/healthz", "/healthz", "", 200},
		{"GET", "/readyz", "/readyz", "", 200},
		{"GET", "/v1/queues", "/v1/queues", "", 200},
		{"GET", "/v1/queues/XBTI0000", "/v1/queues/{name}", "", 200},
		{"GET", "/v1/queues/XBTI0000/messages", "/v1/queues/{name}/messages", "", 200},
		{"GET", "/v1/queues/NOPE", "/v1/queues/{name}", "", 404},
		{"GET", "/v1/messages", "/v1/messages", "", 200},
		{"GET", "/v1/messages?status=nope", "/v1/messages", "", 400},
		{"GET", "/v1/messages/" + b.ndlv, "/v1/messages/{id}", "", 200},
		{"GET", "/v1/tuning", "/v1/tuning", "", 200},
		{"GET", "/v1/audit", "/v1/audit", "", 200},
		{"GET", "/v1/nodes", "/v1/nodes", "", 200},
		{"GET", "/v1/whoami", "/v1/whoami", "", 200},
		{"GET", "/v1/names?kind=queue", "/v1/names", "", 200},
		{"GET", "/v1/eoio", "/v1/eoio", "", 200},
		{"PUT", "/v1/messages/" + b.ndlv + "/payload", "/v1/messages/{id}/payload", "fixed", 200},
		{"PUT", "/v1/messages/" + b.ndlv + "/payload", "/v1/messages/{id}/payload", "fixed", 400}, // unchanged
		{"GET", "/v1/messages/" + b.ndlv, "/v1/messages/{id}", "", 200},                           // with its payload version
		{"POST", "/v1/actions/message.resend", "/v1/actions/{action}", `{"targets":["` + b.ndlv + `"]}`, 200},
		{"PUT", "/v1/messages/" + b.ndlv + "/payload", "/v1/messages/{id}/payload", "again", 409}, // TBDL now
		{"POST", "/v1/actions/tx.commit", "/v1/actions/{action}", `{"targets":["` + b.pend + `"]}`, 200},
		{"PUT", "/v1/tuning/EO_OUTBOUND_PARALLEL", "/v1/tuning/{param}", `{"sub":"WMS","value":2}`, 200},
		{"POST", "/v1/purge", "/v1/purge", `{"dry_run":true}`, 200},
		{"POST", "/v1/eoio/switch", "/v1/eoio/switch", `{"queues":4}`, 200},
		{"GET", "/v1/eoio", "/v1/eoio", "", 200}, // now with the old set
		{"POST", "/v1/messages", "/v1/messages", `{"messages":[{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"eA=="}]}`, 201},
	} {
		req, err := http.NewRequest(c.method, b.socket.URL+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
		resp, err := b.socket.Client().Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		what := c.method + " " + c.path
		require.Equal(t, c.status, resp.StatusCode, "%s: %s", what, raw)
		var v any
		require.NoError(t, json.Unmarshal(raw, &v), what)
		requireValid(t, schemaOf(t, doc, c.method, c.doc, c.status), v, what)
	}
}

// TestOpenAPIDescribesEveryField validates fully populated values of the
// types the API answers with, for the fields that a small store leaves
// out: a node with its state, an EOIO status with and without an old set.
func TestOpenAPIDescribesEveryField(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	nodes := schemaOf(t, doc, "GET", "/v1/nodes", 200)
	for _, state := range []string{"alive", "stopped", "dead", "recovered"} {
		n := admin.Node{ID: "node-a", Incarnation: 3, Address: "127.0.0.1:7870", StartedAt: at, HeartbeatAt: at,
			Alive: state == "alive", State: state, Queues: 4, InFlight: 2}
		requireValid(t, nodes, []admin.Node{n}, fmt.Sprintf("a node %s", state))
	}
	eoio := schemaOf(t, doc, "GET", "/v1/eoio", 200)
	set := domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}
	group := admin.QueueGroup{Queues: 1, Messages: 2, Names: []string{"XBQIA"}}
	requireValid(t, eoio, admin.EOIOStatus{State: "started", Current: set, Old: &domain.EOIOSet{Prefix: domain.PrefixXBQ},
		SwitchedAt: &at, SwitchedBy: "adm", Draining: group, ErrorQueues: group}, "an EOIO status during a switch")
	requireValid(t, eoio, admin.EOIOStatus{State: "inactive", Current: domain.EOIOSet{Prefix: domain.PrefixXBQ},
		Draining: admin.QueueGroup{Names: []string{}}, ErrorQueues: admin.QueueGroup{Names: []string{}}}, "an EOIO status before any switch")
}

// TestOpenAPINullableOldSet: the EOIO status's old set, written out so that
// it may be null, is the EOIOSet, field for field.
func TestOpenAPINullableOldSet(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	set := doc.kin.Components.Schemas["EOIOSet"].Value
	old := doc.kin.Components.Schemas["EOIOStatus"].Value.Properties["old"].Value
	require.True(t, old.Nullable)
	require.Empty(t, old.AllOf, "nullable does not reach into an allOf")
	require.ElementsMatch(t, set.Required, old.Required)
	require.Len(t, old.Properties, len(set.Properties))
	for name, p := range set.Properties {
		got, err := json.Marshal(old.Properties[name].Value)
		require.NoError(t, err)
		want, err := json.Marshal(p.Value)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), "old.%s", name)
	}
}
