package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// TestNamesPages: a page of names that does not hold them all says so
// with a next cursor, and the pages from it hold every name once, in
// order; the last page's next is empty. The answers are what the document
// describes.
func TestNamesPages(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	schema := schemaOf(t, doc, "GET", "/v1/names", 200)
	b := setupAuth(t, nil)
	var reqs []domain.SendRequest
	for _, app := range []string{"ORDERS_DE", "ORDERS_AT", "RETURNS", "INVOICES"} {
		reqs = append(reqs, domain.SendRequest{QoS: domain.EOIO, Sender: "SHOP", Receivers: []string{"WMS"}, AppQueue: app,
			Payload: []byte("x")})
	}
	_, err := b.svc.Send(context.Background(), reqs)
	require.NoError(t, err)
	get := func(q url.Values) wire.Page[string] {
		t.Helper()
		resp, err := b.socket.Client().Get(b.socket.URL + "/v1/names?" + q.Encode())
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
		var v any
		require.NoError(t, json.Unmarshal(raw, &v))
		requireValid(t, schema, v, "GET /v1/names?"+q.Encode())
		var page wire.Page[string]
		require.NoError(t, json.Unmarshal(raw, &page))
		return page
	}
	for _, kind := range []string{"queue", "status", "state"} {
		all := get(url.Values{"kind": {kind}})
		require.Empty(t, all.Next, "%s: one page holds them all", kind)
		require.Greater(t, len(all.Items), 2, kind)

		for _, limit := range []string{"1", "2"} {
			var got []string
			q := url.Values{"kind": {kind}, "limit": {limit}}
			for range len(all.Items) + 1 {
				page := get(q)
				got = append(got, page.Items...)
				if page.Next == "" {
					break
				}
				require.Equal(t, page.Items[len(page.Items)-1], page.Next, "%s: next is the page's last name", kind)
				q.Set("after", page.Next)
			}
			require.Equal(t, all.Items, got, "%s in pages of %s", kind, limit)
		}
		exact := get(url.Values{"kind": {kind}, "limit": {"2"}, "after": {all.Items[len(all.Items)-3]}})
		require.Equal(t, all.Items[len(all.Items)-2:], exact.Items)
		require.Empty(t, exact.Next, "%s: a page that ends the list says it is complete", kind)
	}
}

// TestErrorsSpeakAPIWords: an error about a request's field names the
// field as the request does, not as the CLI's flag, and says which field
// it is.
func TestErrorsSpeakAPIWords(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	b := setupAuth(t, nil)
	for _, c := range []struct {
		method, path, doc, body string
		field, msg              string
	}{
		{"POST", "/v1/eoio/switch", "/v1/eoio/switch", `{"queues":500}`, "queues",
			`queues "500" must be a whole number from 0 to 99; nothing was changed`},
		{"PUT", "/v1/tuning/EO_INBOUND_PARALLEL", "/v1/tuning/{param}", `{"value":2}`, "sub",
			`EO_INBOUND_PARALLEL needs sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not ""`},
		{"PUT", "/v1/tuning/EO_OUTBOUND_PARALLEL", "/v1/tuning/{param}", `{"sub":"NOPE","value":2}`, "sub",
			`EO_OUTBOUND_PARALLEL sub NOPE: no receiver NOPE is configured; nothing was changed`},
	} {
		req, err := http.NewRequest(c.method, b.socket.URL+c.path, strings.NewReader(c.body))
		require.NoError(t, err)
		resp, err := b.socket.Client().Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
		var env wire.ErrorBody
		require.NoError(t, json.Unmarshal(raw, &env))
		require.Equal(t, c.msg, env.Error.Message, c.body)
		require.Equal(t, c.field, env.Error.Field, c.body)
		require.NotContains(t, string(raw), "--", c.body)
		var v any
		require.NoError(t, json.Unmarshal(raw, &v))
		requireValid(t, schemaOf(t, doc, c.method, c.doc, 400), v, c.method+" "+c.path)
	}
}
