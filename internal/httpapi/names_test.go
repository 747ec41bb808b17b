package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
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
