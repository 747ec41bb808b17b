package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// sendAnswer is what POST /v1/messages answered.
type sendAnswer struct {
	status int
	page   wire.Page[admin.Sent]
	err    wire.ErrorDetail
	raw    any
}

// post sends a body to POST /v1/messages on the trusted socket, with the
// given Idempotency-Key header values.
func (b *authBundle) post(t *testing.T, body string, keys ...string) sendAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.socket.URL+"/v1/messages", strings.NewReader(body))
	require.NoError(t, err)
	for _, k := range keys {
		req.Header.Add(wire.IdempotencyKeyHeader, k)
	}
	resp, err := b.socket.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := sendAnswer{status: resp.StatusCode}
	require.NoError(t, json.Unmarshal(raw, &a.raw), "%s", raw)
	if resp.StatusCode >= 400 {
		var env wire.ErrorBody
		require.NoError(t, json.Unmarshal(raw, &env))
		a.err = env.Error
	} else {
		require.NoError(t, json.Unmarshal(raw, &a.page))
	}
	return a
}

// order is a send body of one EO message from ERP to WMS with a payload
// (base64) and extra fields, such as a key.
func order(payloadB64, extra string) string {
	return `{"messages":[{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"` + payloadB64 + `"` + extra + `}]}`
}

func TestSendKey(t *testing.T) {
	t.Parallel()
	doc := strictDoc(t)
	b := setupAuth(t, nil)
	valid := func(a sendAnswer, what string) {
		t.Helper()
		requireValid(t, schemaOf(t, doc, "POST", "/v1/messages", a.status), a.raw, what)
	}

	first := b.post(t, order("eA==", `,"key":"order-4711"`))
	require.Equal(t, http.StatusCreated, first.status)
	require.Len(t, first.page.Items, 1)
	require.False(t, first.page.Items[0].Duplicate)
	require.Equal(t, "order-4711", first.page.Items[0].Key)
	valid(first, "a first send")
	id := first.page.Items[0].ID

	// A repeat, by the body's key or the header's: 200, the same message.
	for name, a := range map[string]sendAnswer{
		"body":   b.post(t, order("eA==", `,"key":"order-4711"`)),
		"header": b.post(t, order("eA==", ""), "order-4711"),
		"both":   b.post(t, order("eA==", `,"key":"order-4711"`), "order-4711"),
	} {
		require.Equal(t, http.StatusOK, a.status, name)
		require.Len(t, a.page.Items, 1, name)
		require.True(t, a.page.Items[0].Duplicate, name)
		require.Equal(t, id, a.page.Items[0].ID, name)
		valid(a, "a repeat by "+name)
	}

	// A repeat that differs: 409, naming the difference; nothing stored.
	conflict := b.post(t, order("eQ==", ""), "order-4711")
	require.Equal(t, http.StatusConflict, conflict.status)
	require.Equal(t, "conflict", conflict.err.Code)
	require.Equal(t, `key "order-4711" of sender ERP is message `+id+`'s, which differs in payload (other bytes, 1 both times)`,
		conflict.err.Message)
	require.Equal(t, "a retry sends the message again as it was first sent; a new message needs a new key", conflict.err.Hint)
	valid(conflict, "a conflict")

	// A batch with something new is 201; each message says what it is.
	mixed := b.post(t, `{"messages":[{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"eA==","key":"order-4711"},`+
		`{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"eg==","key":"order-4712"}]}`)
	require.Equal(t, http.StatusCreated, mixed.status)
	require.True(t, mixed.page.Items[0].Duplicate)
	require.Equal(t, id, mixed.page.Items[0].ID)
	require.False(t, mixed.page.Items[1].Duplicate)
	valid(mixed, "a batch with a repeat")

	// message list --key, and message show's key.
	var listed wire.Page[*domain.Message]
	getJSON(t, b, "/v1/messages?key=order-4711", &listed)
	require.Len(t, listed.Items, 1)
	require.Equal(t, id, listed.Items[0].ID)
	var shown domain.Message
	getJSON(t, b, "/v1/messages/"+id, &shown)
	require.Equal(t, "order-4711", shown.Key)
}

// getJSON reads a JSON answer of the trusted socket.
func getJSON(t *testing.T, b *authBundle, path string, v any) {
	t.Helper()
	resp, err := b.socket.Client().Get(b.socket.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

func TestSendKeyRefused(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, nil)
	long := strings.Repeat("k", domain.MaxKey+1)
	for name, c := range map[string]struct {
		body string
		keys []string
		want string
	}{
		"header twice": {order("eA==", ""), []string{"a", "b"}, "the Idempotency-Key header is given 2 times; give it once"},
		"header empty": {order("eA==", ""), []string{""}, "the Idempotency-Key header is empty; a key is 1-128 printable characters"},
		"header and body differ": {order("eA==", `,"key":"order-1"`), []string{"order-2"},
			`the Idempotency-Key header "order-2" and the message's "key" "order-1" differ; give one of them, or the same in both`},
		"header on a batch": {`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":""},{"qos":"EO","sender":"ERP","payload_b64":""}]}`,
			[]string{"k"}, `the Idempotency-Key header is the key of one message; this request sends 2, so give each its "key"`},
		"body key empty": {order("eA==", `,"key":""`), nil, `"key" is empty; a key is 1-128 printable characters (leave it out for none)`},
		"header too long": {order("eA==", ""), []string{long},
			`key "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…" is 129 characters long; a key is 1-128 printable characters`},
		"header with a tab": {order("eA==", ""), []string{"order\t4711"},
			`key "order\t4711" contains the control character U+0009 at byte 5; a key is 1-128 printable characters (no tab)`},
		"body key with a newline": {order("eA==", `,"key":"a\nb"`), nil,
			`key "a\nb" contains the control character U+000A at byte 1; a key is 1-128 printable characters (no tab)`},
	} {
		a := b.post(t, c.body, c.keys...)
		require.Equal(t, http.StatusBadRequest, a.status, name)
		require.Equal(t, "invalid", a.err.Code, name)
		require.Equal(t, c.want, a.err.Message, name)
	}
	var listed wire.Page[*domain.Message]
	getJSON(t, b, "/v1/messages", &listed)
	require.Len(t, listed.Items, 2, "nothing stored beyond the bundle's two")

	// The refusals are audited, as every refused send is.
	var audit wire.Page[*domain.AuditEntry]
	getJSON(t, b, "/v1/audit?result=error&limit=100", &audit)
	var details []string
	for _, e := range audit.Items {
		details = append(details, e.Detail)
	}
	require.Contains(t, strings.Join(details, "\n"), "the Idempotency-Key header is given 2 times")
	require.Contains(t, strings.Join(details, "\n"), "contains the control character U+0009")
}

// TestSendKeyConcurrent: producers retrying at once over HTTP store one
// message: one answer is 201, the others 200 with its id.
func TestSendKeyConcurrent(t *testing.T) {
	t.Parallel()
	b := setupAuth(t, nil)
	const racers = 8
	statuses := make([]int, racers)
	pages := make([]wire.Page[admin.Sent], racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			req, err := http.NewRequest(http.MethodPost, b.socket.URL+"/v1/messages", strings.NewReader(order("eA==", "")))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set(wire.IdempotencyKeyHeader, "race")
			resp, err := b.socket.Client().Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			statuses[i] = resp.StatusCode
			errs[i] = json.NewDecoder(resp.Body).Decode(&pages[i])
		})
	}
	close(start)
	wg.Wait()
	created, ids := 0, map[string]bool{}
	for i := range racers {
		require.NoError(t, errs[i])
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, statuses[i])
		if statuses[i] == http.StatusCreated {
			created++
		}
		require.Len(t, pages[i].Items, 1)
		require.Equal(t, statuses[i] == http.StatusOK, pages[i].Items[0].Duplicate)
		ids[pages[i].Items[0].ID] = true
	}
	require.Equal(t, 1, created)
	require.Len(t, ids, 1, "one id for all")
	var listed wire.Page[*domain.Message]
	getJSON(t, b, "/v1/messages?key=race", &listed)
	require.Len(t, listed.Items, 1)
}
