package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// putPayload makes a PUT of a payload with the headers given and returns
// the status, the ETag and the body.
func putPayload(t *testing.T, b *authBundle, id, query, payload, token string, header map[string]string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest("PUT", b.srv.URL+"/v1/messages/"+id+"/payload"+query, strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+roleTokens[token])
	req.Header.Set("Content-Type", "application/octet-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("ETag"), raw
}

func getPayload(t *testing.T, b *authBundle, id, query string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("GET", b.srv.URL+"/v1/messages/"+id+"/payload"+query, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+roleTokens["operator"])
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("ETag"), string(raw)
}

// TestEditPayloadIfMatch: the ETag of a payload read is what an edit gives
// back as If-Match; an edit that names a version the payload no longer has
// is refused with 412 and changes nothing, and the refusal is audited
// under the edit's action and target.
func TestEditPayloadIfMatch(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, tokenConfig)
	status, tag, body := getPayload(t, b, b.ndlv, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, `"1"`, tag)
	require.Equal(t, "x", body)

	status, tag, raw := putPayload(t, b, b.ndlv, "?reason=fixed+the+article", "x, fixed", "operator", map[string]string{"If-Match": `"1"`})
	require.Equal(t, http.StatusOK, status, "%s", raw)
	require.Equal(t, `"2"`, tag)
	var res admin.EditResult
	require.NoError(t, json.Unmarshal(raw, &res))
	require.Equal(t, admin.EditResult{ID: b.ndlv, Status: domain.StatusNDLV,
		Previous: admin.VersionOf(1, []byte("x")), Current: admin.VersionOf(2, []byte("x, fixed"))}, res)

	// A second editor who read version 1 loses.
	status, _, raw = putPayload(t, b, b.ndlv, "", "x, mine", "admin", map[string]string{"If-Match": `"1"`})
	require.Equal(t, http.StatusPreconditionFailed, status, "%s", raw)
	require.Contains(t, string(raw), `"code": "conflict"`)
	require.Contains(t, string(raw), "the current one is 2")

	for n, want := range map[string]string{"": "x, fixed", "?version=1": "x", "?version=2": "x, fixed"} {
		status, _, body := getPayload(t, b, b.ndlv, n)
		require.Equal(t, http.StatusOK, status, n)
		require.Equal(t, want, body, n)
	}
	status, _, _ = getPayload(t, b, b.ndlv, "?version=3")
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = getPayload(t, b, b.ndlv, "?version=zero")
	require.Equal(t, http.StatusBadRequest, status)

	for _, c := range []struct {
		query, payload string
		header         map[string]string
		status         int
	}{
		{"", "y", map[string]string{"If-Match": "W/\"2\""}, http.StatusBadRequest},
		{"", "y", map[string]string{"If-Match": "*"}, http.StatusBadRequest},
		{"?resend=maybe", "y", nil, http.StatusBadRequest},
		{"", strings.Repeat("y", 10<<20+1), nil, http.StatusRequestEntityTooLarge},
	} {
		status, _, raw := putPayload(t, b, b.ndlv, c.query, c.payload, "operator", c.header)
		require.Equal(t, c.status, status, "%v %s: %.200s", c.header, c.query, raw)
	}
	status, _, raw = putPayload(t, b, b.ndlv, "", "y", "monitor", nil)
	require.Equal(t, http.StatusForbidden, status, "%s", raw)
	status, _, _ = putPayload(t, b, b.ndlv, "", "y", "producer", nil)
	require.Equal(t, http.StatusForbidden, status)

	var results []string
	require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{Action: string(admin.ActEdit), OldestFirst: true},
		func(e *domain.AuditEntry) error {
			require.Equal(t, []string{b.ndlv}, e.Targets, "an edit's entries name its message")
			results = append(results, e.Actor+" "+e.Result)
			return nil
		}))
	require.Equal(t, []string{"ops-operator ok", "ops-admin conflict", "ops-operator error", "ops-operator error",
		"ops-operator error", "ops-operator error"}, results)
	status, tag, _ = getPayload(t, b, b.ndlv, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, `"2"`, tag, "no refused edit changed the payload")
}
