package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// fuzzMaxPayload is small, so that the fuzzers reach the payload limit.
const fuzzMaxPayload = 1 << 10

// fuzzServer is the API over a real local service on a bbolt store, with
// one queue and one message, as the socket serves it.
type fuzzServer struct {
	h  http.Handler
	id string
}

func newFuzzServer(f *testing.F) *fuzzServer {
	f.Helper()
	st, err := bolt.Open(filepath.Join(f.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(f, err)
	svc := local.New(st, local.Options{MaxPayload: fuzzMaxPayload, Receivers: []string{"WMS"}})
	f.Cleanup(func() { require.NoError(f, svc.Close()) })
	msgs, err := svc.Send(context.Background(), []domain.SendRequest{
		{QoS: domain.EOIO, Sender: "ERP", Receivers: []string{"WMS"}, AppQueue: "ORDERS", Payload: []byte("x")},
	})
	require.NoError(f, err)
	api := New(Options{Service: svc, Auditor: svc, MaxPayload: fuzzMaxPayload})
	return &fuzzServer{h: api.Handler(true), id: msgs[0].ID}
}

// serve runs one request through the handler. A panic fails the fuzzer.
func (s *fuzzServer) serve(method, path, rawQuery string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/", bytes.NewReader(body))
	r.URL.Path, r.URL.RawQuery = path, rawQuery
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

// checkAnswer requires a 2xx answer, or a refusal as 400 or 413 (or 404:
// unsetting a tuning value that is not set) with the error envelope whose
// code matches; anything else (500, a panic, a bare body) fails.
func checkAnswer(t *testing.T, w *httptest.ResponseRecorder, what string) {
	t.Helper()
	require.Equal(t, "application/json", w.Header().Get("Content-Type"), what)
	if w.Code/100 == 2 {
		require.True(t, json.Valid(w.Body.Bytes()), "%s: the answer is JSON", what)
		return
	}
	var env wire.ErrorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env), "%s: the error envelope: %s", what, w.Body.String())
	switch w.Code {
	case http.StatusBadRequest:
		require.Equal(t, "invalid", env.Error.Code, what)
	case http.StatusRequestEntityTooLarge:
		require.Equal(t, "too_large", env.Error.Code, what)
	case http.StatusNotFound:
		require.Equal(t, "not_found", env.Error.Code, what)
	default:
		require.Failf(t, "unexpected status", "%s: %d %s", what, w.Code, w.Body.String())
	}
	require.NotEmpty(t, env.Error.Message, what)
}

func FuzzSendBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, seed := range []string{
		`{"messages":[{"qos":"EO","sender":"ERP","receivers":["WMS"],"payload_b64":"eA=="}]}`,
		`{"messages":[{"qos":"EOIO","sender":"ERP","app_queue":"ORDERS","payload_b64":"","headers":{"X-Env":"prod"}}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA=="},{"qos":"EO","sender":"E R P","payload_b64":"eA=="}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"not base64!"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"` + strings.Repeat("QUFB", 400) + `"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","prepare":true}]}`,
		`{"messages":[{"qos":"eo","sender":"ERP","payload_b64":"eA=="}]}`,
		`{"messages":[]}`, `{"messages":null}`, `{}`, `[]`, `null`, ``, `{`, `{"messages":[{}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","extra":1}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA=="}]}{"messages":[]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","headers":{"":"v"}}]}`,
		`{"messages":[{"qos":1,"sender":["ERP"]}]}`, "\xff\xfe", `{"messages":[{"qos":"EO","sender":"ERP\u0000"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","key":"order-4711"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eQ==","key":"order-4711"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","key":"k"},{"qos":"EO","sender":"ERP","payload_b64":"eA==","key":"k"}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","key":""}]}`,
		`{"messages":[{"qos":"EO","sender":"ERP","payload_b64":"eA==","key":"a\tb"}]}`,
	} {
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "prepare=true")
	}
	f.Fuzz(func(t *testing.T, body []byte, rawQuery string) {
		w := s.serve("POST", "/v1/messages", rawQuery, body)
		what := "POST /v1/messages " + string(body)
		if w.Code == http.StatusConflict {
			// A key sent before, with another message.
			var env wire.ErrorBody
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env), what)
			require.Equal(t, "conflict", env.Error.Code, what)
			require.Contains(t, env.Error.Message, "which differs in", what)
			return
		}
		checkAnswer(t, w, what)
		if w.Code/100 == 2 {
			var in wire.SendBody
			require.NoError(t, json.Unmarshal(body, &in))
			var page wire.Page[admin.Sent]
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &page))
			require.Len(t, page.Items, len(in.Messages), "one message per message sent")
			stored := 0
			for _, m := range page.Items {
				if !m.Duplicate {
					stored++
				}
			}
			// 201 when something was stored, 200 when every message repeated a key.
			require.Equal(t, stored > 0, w.Code == http.StatusCreated, what)
			require.Equal(t, stored == 0, w.Code == http.StatusOK, what)
		}
	})
}

func FuzzActBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, seed := range []string{
		`{"targets":["` + s.id + `"]}`, `{"targets":["` + strings.ToUpper(s.id) + `"],"dry_run":true}`,
		`{"targets":["0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"],"reason":"why"}`, `{"targets":["nope"]}`,
		`{"targets":[]}`, `{"targets":null}`, `{}`, `{"targets":"x"}`, `{"targets":[1]}`, `[]`, ``, `{"targets":[""]}`,
		`{"targets":["XBQIORDERS"]}`, `{"targets":["` + strings.Repeat("Q", 30) + `"]}`, `{"reason":"` + strings.Repeat("r", 2000) + `"}`,
	} {
		for _, a := range []string{"message.resend", "message.fail", "blacklist.release", "blacklist.fail", "tx.commit",
			"tx.rollback", "queue.stop", "queue.start", "message.delete", "", ".", "..", "a/../b", "%2E"} {
			f.Add([]byte(seed), a)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, action string) {
		w := s.serve("POST", "/v1/actions/"+action, "", body)
		checkAnswer(t, w, "POST /v1/actions/"+action+" "+string(body))
	})
}

func FuzzTuneBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, seed := range []struct{ param, body string }{
		{"EO_INBOUND_PARALLEL", `{"sub":"CENTRAL","value":4}`},
		{"EO_OUTBOUND_PARALLEL", `{"sub":"WMS","value":9999}`},
		{"EO_OUTBOUND_PARALLEL", `{"sub":"","value":10000}`},
		{"EO_OUTBOUND_PARALLEL", `{"value":0}`},
		{"EO_OUTBOUND_PARALLEL", `{"value":-1}`},
		{"EO_OUTBOUND_PARALLEL", `{"value":1e3}`},
		{"EO_OUTBOUND_PARALLEL", `{"value":99999999999999999999}`},
		{"EO_OUTBOUND_PARALLEL", `{"value":"2"}`},
		{"eo_inbound_parallel", `{"sub":"central","value":2}`},
		{"", `{"value":2}`}, {"X/Y", `{"value":2}`}, {"..", `{"value":2}`}, {"X//Y", `{"value":2}`}, {"EO_INBOUND_PARALLEL", ``}, {"EO_INBOUND_PARALLEL", `{`},
		{"EO_INBOUND_PARALLEL", `{"sub":"CENTRAL","value":2,"x":1}`},
	} {
		f.Add(seed.param, []byte(seed.body), "sub=WMS")
	}
	f.Fuzz(func(t *testing.T, param string, body []byte, rawQuery string) {
		w := s.serve("PUT", "/v1/tuning/"+param, "", body)
		checkAnswer(t, w, "PUT /v1/tuning/"+param+" "+string(body))
		w = s.serve("DELETE", "/v1/tuning/"+param, rawQuery, nil)
		checkAnswer(t, w, "DELETE /v1/tuning/"+param+"?"+rawQuery)
	})
}

func FuzzPurgeBody(f *testing.F) {
	s := newFuzzServer(f)
	for _, seed := range []string{`{"dry_run":true}`, `{"delivered_before":"2026-03-10T12:00:00Z"}`,
		`{"failed_before":"2026-03-10T12:00:00.123456789+01:00","dry_run":true}`, `{"delivered_before":"yesterday"}`,
		`{"delivered_before":"0001-01-01T00:00:00Z"}`, `{"failed_before":"9999-12-31T23:59:59Z","dry_run":true}`, `{}`, ``, `null`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAnswer(t, s.serve("POST", "/v1/purge", "", body), "POST /v1/purge "+string(body))
	})
}

// FuzzListQueries runs wire.ParseMessageQuery, ParseQueueQuery and
// ParseLimit, and the cursors of the other lists, through their handlers.
func FuzzListQueries(f *testing.F) {
	s := newFuzzServer(f)
	for _, seed := range []string{
		"", "limit=1", "limit=1000", "limit=0", "limit=1001", "limit=-1", "limit=x", "limit=1e3", "limit=99999999999999999999",
		"status=TBDL,wait", "status=NOPE", "status=,,", "queue=XBQIORDERS&receiver=WMS&sender=ERP&app_queue=ORDERS",
		"error=HTTP%20503", "older_than=2026-03-10T12:00:00Z", "newer_than=2026-03-10T12:00:00.5%2B01:00", "older_than=now",
		"blacklisted=true", "blacklisted=1", "blacklisted=yes", "after=" + s.id, "after=nope", "after=%00",
		"qos=eo,EOIO", "qos=X", "stage=inbound", "stage=sideways", "state=blocked,EMPTY", "state=NOPE", "name=XBQ*",
		"name=[", "name=XBQI%2F*", "all=true", "after=1", "after=-1", "after=18446744073709551616", "since=2026-01-01T00:00:00Z",
		"since=x", "actor=ops", "%zz", "a=%", "limit=1&limit=2", ";",
	} {
		f.Add(seed)
	}
	paths := []string{"/v1/messages", "/v1/queues", "/v1/queues/XBQIORDERS/messages", "/v1/audit"}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		for _, p := range paths {
			w := s.serve("GET", p, rawQuery, nil)
			checkAnswer(t, w, "GET "+p+"?"+rawQuery)
			if w.Code == http.StatusOK {
				var page struct {
					Items []json.RawMessage `json:"items"`
					Next  *string           `json:"next"`
				}
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &page))
				require.NotNil(t, page.Items, "GET %s?%s: items is a list", p, rawQuery)
				require.NotNil(t, page.Next, "GET %s?%s: next is present", p, rawQuery)
			}
		}
	})
}

// FuzzMessageQueryRoundTrip checks that a filter the server parsed is
// encoded by the client into a query that parses to the same filter.
func FuzzMessageQueryRoundTrip(f *testing.F) {
	for _, seed := range []string{"status=tbdl,WAIT&queue=A,B&receiver=%20WMS%20", "error=a,b&after=x",
		"older_than=2026-03-10T12:00:00.000000001%2B01:00&newer_than=2026-03-09T00:00:00Z", "blacklisted=0",
		"sender=,,ERP,,&app_queue=ORDERS", "queue=a%2Cb", "error=%E2%9C%93"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		first, err := wire.ParseMessageQuery(q)
		if err != nil {
			require.ErrorIs(t, err, domain.ErrInvalid)
			return
		}
		again, err := wire.ParseMessageQuery(wire.MessageQuery(first))
		require.NoError(t, err)
		require.True(t, first.OlderThan.Equal(again.OlderThan))
		require.True(t, first.NewerThan.Equal(again.NewerThan))
		first.OlderThan, first.NewerThan = again.OlderThan, again.NewerThan
		require.Equal(t, first, again)
	})
}
