package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

// checkID is a message id as the server sends it.
const checkID = "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"

// checkRequest is a check as the server makes it, changed by change.
func checkRequest(change func(r *http.Request)) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/tx-check",
		strings.NewReader(`{"id":"`+checkID+`","sender":"SHOP","interface":"OrderCreate","headers":{"X-Order":"4711"}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	r.Header.Set("X-Queuectl-Message-Id", checkID)
	if change != nil {
		change(r)
	}
	return r
}

func withBody(body string) func(r *http.Request) {
	return func(r *http.Request) {
		r.Body = http.NoBody
		if body != "" {
			r.Body = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).Body
		}
	}
}

func TestCheckHandler(t *testing.T) {
	t.Parallel()
	var got []client.Check
	h := client.CheckHandler(func(_ context.Context, c client.Check) (client.TxState, error) {
		got = append(got, c)
		switch c.Headers["X-Order"] {
		case "fail":
			return "", errors.New("the orders database is down")
		case "maybe":
			return "maybe", nil
		}
		return client.TxCommit, nil
	})

	w := httptest.NewRecorder()
	h.ServeHTTP(w, checkRequest(nil))
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	require.Equal(t, `{"state":"commit"}`+"\n", w.Body.String())
	require.Equal(t, []client.Check{{ID: checkID, Sender: "SHOP", Interface: "OrderCreate",
		Headers: map[string]string{"X-Order": "4711"}}}, got)

	// A message without interface or headers: both are there, empty.
	got = nil
	w = httptest.NewRecorder()
	h.ServeHTTP(w, checkRequest(withBody(`{"id":"`+checkID+`","sender":"SHOP","interface":"","headers":{}}`)))
	require.Equal(t, http.StatusOK, w.Code)
	require.NotNil(t, got[0].Headers)

	// Anything the server would not send decides nothing.
	for name, c := range map[string]struct {
		change func(r *http.Request)
		status int
		says   string
	}{
		"GET":                  {func(r *http.Request) { r.Method = http.MethodGet }, http.StatusMethodNotAllowed, "a check is a POST"},
		"no content type":      {func(r *http.Request) { r.Header.Del("Content-Type") }, http.StatusUnsupportedMediaType, "application/json"},
		"form":                 {func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, http.StatusUnsupportedMediaType, "application/json"},
		"no id header":         {func(r *http.Request) { r.Header.Del("X-Queuectl-Message-Id") }, http.StatusBadRequest, "X-Queuectl-Message-Id"},
		"another id header":    {func(r *http.Request) { r.Header.Set("X-Queuectl-Message-Id", strings.Replace(checkID, "0", "1", 1)) }, http.StatusBadRequest, "is not the id"},
		"empty body":           {withBody(""), http.StatusBadRequest, "not a JSON object"},
		"array":                {withBody(`[]`), http.StatusBadRequest, "not a JSON object"},
		"null":                 {withBody(`null`), http.StatusBadRequest, "not a JSON object"},
		"two objects":          {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":{}} {}`), http.StatusBadRequest, "goes on after"},
		"unknown field":        {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":{},"state":"commit"}`), http.StatusBadRequest, `"state"`},
		"missing field":        {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":""}`), http.StatusBadRequest, "a check has"},
		"field spelled so":     {withBody(`{"ID":"` + checkID + `","sender":"SHOP","interface":"","headers":{}}`), http.StatusBadRequest, `"ID"`},
		"headers null":         {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":null}`), http.StatusBadRequest, "headers is null"},
		"headers not strings":  {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":{"X":1}}`), http.StatusBadRequest, "headers"},
		"id a number":          {withBody(`{"id":42,"sender":"SHOP","interface":"","headers":{}}`), http.StatusBadRequest, "id"},
		"id not an id":         {withBody(`{"id":"4711","sender":"SHOP","interface":"","headers":{}}`), http.StatusBadRequest, "not a message id"},
		"no sender":            {withBody(`{"id":"` + checkID + `","sender":"","interface":"","headers":{}}`), http.StatusBadRequest, "sender is empty"},
		"not UTF-8":            {withBody("{\"id\":\"" + checkID + "\",\"sender\":\"SHOP\",\"interface\":\"\xff\",\"headers\":{}}"), http.StatusBadRequest, "not UTF-8"},
		"too large":            {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"` + strings.Repeat("x", 1<<20) + `","headers":{}}`), http.StatusRequestEntityTooLarge, "at most"},
		"the producer failed":  {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":{"X-Order":"fail"}}`), http.StatusServiceUnavailable, "the orders database is down"},
		"the producer is lost": {withBody(`{"id":"` + checkID + `","sender":"SHOP","interface":"","headers":{"X-Order":"maybe"}}`), http.StatusInternalServerError, `"maybe"`},
	} {
		w := httptest.NewRecorder()
		r := checkRequest(c.change)
		h.ServeHTTP(w, r)
		require.Equal(t, c.status, w.Code, name)
		require.Contains(t, w.Body.String(), c.says, name)
		require.NotContains(t, w.Body.String(), `"state"`+":", name)
		if c.status == http.StatusMethodNotAllowed {
			require.Equal(t, http.MethodPost, w.Header().Get("Allow"))
		}
	}
}

// TestCheckBack: the server's own check-backs, answered by CheckHandler:
// commit commits the message, rollback deletes it, unknown and a failure
// leave it PEND.
func TestCheckBack(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]client.Check{}
	endpoint := httptest.NewServer(client.CheckHandler(func(_ context.Context, c client.Check) (client.TxState, error) {
		mu.Lock()
		asked[c.ID] = c
		mu.Unlock()
		switch c.Headers["X-Order"] {
		case "1":
			return client.TxCommit, nil
		case "2":
			return client.TxRollback, nil
		case "3":
			return client.TxUnknown, nil
		}
		return "", errors.New("the orders database is down")
	}))
	t.Cleanup(endpoint.Close)
	config := fmt.Sprintf("senders:\n  SHOP: {check_url: %q}\ntx: {check_after: 1ms, check_interval: 100ms, max_checks: 1000}\n",
		endpoint.URL+"/tx-check")

	forEachStore(t, config, func(t *testing.T, s *server) {
		c := s.client(t)
		ids := map[string]string{}
		for _, order := range []string{"1", "2", "3", "4"} {
			sent, err := c.Prepare(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"},
				Interface: "OrderCreate", Headers: map[string]string{"X-Order": order, "X-Trace": "t" + order}})
			require.NoError(t, err)
			ids[order] = sent.ID
		}
		logged := func(msg, order, answer string) func(logRecord) bool {
			return func(rec logRecord) bool {
				if rec.Message == ids[order] && strings.HasPrefix(rec.Answer, "HTTP 4") {
					t.Errorf("the handler refused the server's check of order %s: %s", order, rec.Answer)
					return true
				}
				return rec.Msg == msg && rec.Message == ids[order] && rec.Answer == answer
			}
		}
		s.waitLog(t, logged("check-back: committed", "1", "commit"))
		s.waitLog(t, logged("check-back: rolled back", "2", "rollback"))
		s.waitLog(t, logged("check-back unanswered", "3", "unknown"))
		s.waitLog(t, logged("check-back unanswered", "4", "HTTP 503"))

		require.NotEqual(t, "PEND", s.message(t, ids["1"]).Status)
		require.Nil(t, s.message(t, ids["2"]))
		require.Equal(t, "PEND", s.message(t, ids["3"]).Status)
		require.Equal(t, "PEND", s.message(t, ids["4"]).Status)

		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, client.Check{ID: ids["1"], Sender: "SHOP", Interface: "OrderCreate",
			Headers: map[string]string{"X-Order": "1", "X-Trace": "t1"}}, asked[ids["1"]])
	})
}
