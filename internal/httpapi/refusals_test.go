package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// clock is a settable time for the refusal windows.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type refusalBundle struct {
	svc   *local.Service
	api   *Server
	srv   *httptest.Server
	db    string
	clock *clock
}

func setupRefusals(t *testing.T) *refusalBundle {
	t.Helper()
	db := filepath.Join(t.TempDir(), "q.db")
	st, err := bolt.Open(db, bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	c := &clock{now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	api := New(Options{Service: svc, Auditor: svc, Tokens: tokenConfig, Now: c.Now})
	srv := httptest.NewServer(api.Handler(false))
	t.Cleanup(srv.Close)
	return &refusalBundle{svc: svc, api: api, srv: srv, db: db, clock: c}
}

func (b *refusalBundle) post(t *testing.T, path, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader("{}"))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func (b *refusalBundle) entries(t *testing.T) []*domain.AuditEntry {
	t.Helper()
	var out []*domain.AuditEntry
	require.NoError(t, b.svc.Audit(context.Background(), admin.AuditFilter{OldestFirst: true}, func(e *domain.AuditEntry) error {
		out = append(out, e)
		return nil
	}))
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// A client without a token cannot grow the store: 200 requests with
// 100 KB paths are one bounded entry and, when the minute is over, one
// more that counts the rest (§6).
func TestAnonymousRefusalsCannotGrowTheStore(t *testing.T) {
	t.Parallel()
	b := setupRefusals(t)
	before := fileSize(t, b.db)
	long := "/v1/actions/message.resend" + strings.Repeat("x", 100_000)
	for i := range 200 {
		path := long
		if i%2 == 1 {
			path = "/v1/purge/" + strings.Repeat("y", 100_000) // no route, but a path check or 404 all the same
		}
		require.Contains(t, []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed}, b.post(t, path, ""))
	}
	require.Equal(t, http.StatusUnauthorized, b.post(t, "/v1/purge", "Bearer not-a-token"))

	got := b.entries(t)
	require.Len(t, got, 1, "the first refusal is recorded, the others counted")
	require.Equal(t, "anonymous", got[0].Actor)
	require.LessOrEqual(t, len(got[0].Action), domain.MaxAuditName)
	require.Contains(t, got[0].Detail, "further refusals from 127.0.0.1 until 2026-03-10T12:01:00Z are counted")

	// A minute later, the next refusal writes the count, then itself.
	b.clock.advance(time.Minute)
	require.Equal(t, http.StatusUnauthorized, b.post(t, "/v1/purge", ""))
	got = b.entries(t)
	require.Len(t, got, 3)
	require.Contains(t, got[1].Detail, "100 more requests without a valid token were refused from 127.0.0.1 between 2026-03-10T12:00:00Z and 2026-03-10T12:01:00Z")
	require.Equal(t, "purge", got[2].Action, "named as the action it would have been")

	// A valid token's refusal is recorded under its name the first time
	// in a window; the same request refused again is counted, and the
	// count written when the window is over.
	for range 3 {
		require.Equal(t, http.StatusForbidden, b.post(t, "/v1/purge", "Bearer "+roleTokens["monitor"]))
	}
	require.Equal(t, http.StatusForbidden, b.post(t, "/v1/eoio/switch", "Bearer "+roleTokens["monitor"]))
	got = b.entries(t)
	require.Len(t, got, 5)
	require.Equal(t, "ops-monitor", got[3].Actor)
	require.Equal(t, "token ops-monitor (role monitor) may not run 'purge' (POST /v1/purge): it needs role admin", got[3].Detail)
	require.Equal(t, "eoio.switch", got[4].Action, "another request has its own count")
	b.clock.advance(time.Minute)
	require.Equal(t, http.StatusForbidden, b.post(t, "/v1/purge", "Bearer "+roleTokens["monitor"]))
	got = b.entries(t)
	require.Len(t, got, 7)
	require.Equal(t, "ops-monitor", got[5].Actor)
	require.Equal(t, "purge", got[5].Action)
	require.Equal(t, "2 more identical requests were refused between 2026-03-10T12:01:00Z and 2026-03-10T12:02:00Z: "+
		"token ops-monitor (role monitor) may not run 'purge' (POST /v1/purge): it needs role admin", got[5].Detail)
	require.Equal(t, got[3].Detail, got[6].Detail, "then the next window's first")

	grown := fileSize(t, b.db) - before
	t.Logf("the store grew by %d bytes", grown)
	require.Less(t, grown, int64(1<<20))
}

// Refusals are counted per address — per /64 for IPv6 — and a flood of
// addresses shares one count once there are too many to count apart.
func TestRefusalLogCountsPerSource(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	l := newRefusalLog()
	entry := func(source string, at time.Time) *domain.AuditEntry {
		return &domain.AuditEntry{At: at, Actor: "anonymous", Source: source, Action: "POST /v1/purge"}
	}

	require.Len(t, l.note(entry("192.0.2.1", now)), 1)
	require.Empty(t, l.note(entry("192.0.2.1", now)))
	require.Len(t, l.note(entry("192.0.2.2", now)), 1, "another address has its own window")
	require.Len(t, l.note(entry("2001:db8::1", now)), 1)
	require.Empty(t, l.note(entry("2001:db8::ffff:1", now)), "the same /64")
	require.Equal(t, "2001:db8::/64", sourceKey("2001:db8::ffff:1"))

	for i := range maxRefusalSources {
		l.note(entry(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), now))
	}
	require.Equal(t, maxRefusalSources+1, len(l.windows), "the bound, and one shared count beyond it")
	other := l.windows[otherSources].suppressed
	out := l.note(entry("198.51.100.7", now))
	require.Empty(t, out, "beyond the bound, new addresses share one count")
	require.Equal(t, other+1, l.windows[otherSources].suppressed)

	// After the window every count is written by the next refusal's sweep.
	out = l.note(entry("192.0.2.9", now.Add(refusalWindow)))
	var summaries int
	for _, e := range out {
		if strings.Contains(e.Detail, "more requests without a valid token") {
			summaries++
		}
	}
	require.Equal(t, 3, summaries, "192.0.2.1, the IPv6 /64 and the shared count")
	require.Equal(t, 1, len(l.windows))
}

// Every refusal of a request with a token is audited, whichever layer
// refused it: the service (an invalid header), the server before the
// service (a body over the limit, malformed JSON, a path with . or ..,
// an action naming no targets) — and the client, which reports its own.
func TestRefusalsAreAuditedWhateverRefusedThem(t *testing.T) {
	t.Parallel()
	b := setupRefusals(t)
	api := New(Options{Service: b.svc, Auditor: b.svc, Tokens: tokenConfig, Now: b.clock.Now, MaxPayload: 16})
	srv := httptest.NewServer(api.Handler(false))
	t.Cleanup(srv.Close)
	do := func(method, path, body, token string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+roleTokens[token])
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	send := func(msg string) string { return `{"messages":[` + msg + `]}` }
	require.Equal(t, 400, do("POST", "/v1/messages", send(`{"qos":"EO","sender":"ERP","headers":{"X-A":"a\r\nX-B: b"},"payload_b64":""}`), "producer"))
	require.Equal(t, 400, do("POST", "/v1/messages", send(`{"qos":"EO","sender":"ERP","interface":"a\u0000b","payload_b64":""}`), "producer"))
	require.Equal(t, 413, do("POST", "/v1/messages", strings.Repeat(" ", 33<<20)+send(`{}`), "producer"))
	require.Equal(t, 400, do("POST", "/v1/messages", `{"messages":[`, "producer"))
	require.Equal(t, 400, do("POST", "/v1/actions/message.resend", `{"targets":null}`, "operator"))
	require.Equal(t, 400, do("POST", "/v1/actions/../purge", `{}`, "admin"))
	require.Equal(t, 204, do("POST", "/v1/audit/refusals", `{"action":"tune.set","targets":["EO_OUTBOUND_PARALLEL","0"],"reason":"value 0 is out of range"}`, "admin"))
	require.Equal(t, 400, do("POST", "/v1/audit/refusals", `{"action":"anything"}`, "admin"), "only refusals of audited actions")

	type row struct{ actor, action, result string }
	var got []row
	for _, e := range b.entries(t) {
		got = append(got, row{e.Actor, e.Action, e.Result})
	}
	require.Equal(t, []row{
		{"ops-producer", "send", domain.AuditError},
		{"ops-producer", "send", domain.AuditError},
		{"ops-producer", "send", domain.AuditError},
		{"ops-producer", "send", domain.AuditError},
		{"ops-operator", "message.resend", domain.AuditError},
		{"ops-admin", "POST /v1/actions/../purge", domain.AuditError},
		{"ops-admin", "tune.set", domain.AuditError},
	}, got)
}

// A token that may only read cannot grow the store by reporting refusals:
// 500 reports with 50 targets of 100 chars are one bounded entry per
// action and, once the minute is over, one more that counts the rest.
func TestReportedRefusalsCannotGrowTheStore(t *testing.T) {
	t.Parallel()
	b := setupRefusals(t)
	targets := make([]string, 50)
	for i := range targets {
		targets[i] = fmt.Sprintf("%03d%s", i, strings.Repeat("t", 97))
	}
	report := func(action, reason string) int {
		t.Helper()
		body, err := json.Marshal(admin.Refusal{Action: action, Targets: targets, Reason: reason})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/audit/refusals", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+roleTokens["monitor"])
		req.Header.Set("Content-Type", "application/json")
		resp, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	before := fileSize(t, b.db)
	for i := range 500 {
		require.Equal(t, http.StatusNoContent, report("message.resend", fmt.Sprintf("refusal %d", i)))
	}
	require.Equal(t, http.StatusNoContent, report("purge", "another action"))
	got := b.entries(t)
	require.Len(t, got, 2, "one entry per actor and action in a minute")
	require.Equal(t, "ops-monitor", got[0].Actor)
	require.Equal(t, "message.resend", got[0].Action)
	require.Len(t, got[0].Targets, 50)
	require.Contains(t, got[0].Detail, "refusal 0; further refusals of message.resend reported by ops-monitor until "+
		"2026-03-10T12:01:00Z are counted, not recorded one by one")
	require.Equal(t, "purge", got[1].Action)
	require.Equal(t, http.StatusBadRequest, report("message.list", "not audited"), "an action whose refusals are not audited")

	// A minute later, the next report writes the count, then itself.
	b.clock.advance(time.Minute)
	require.Equal(t, http.StatusNoContent, report("message.resend", "later"))
	got = b.entries(t)
	require.Len(t, got, 4)
	require.Equal(t, "ops-monitor", got[2].Actor)
	require.Equal(t, "message.resend", got[2].Action)
	require.Equal(t, "499 more refusals of message.resend reported by ops-monitor between 2026-03-10T12:00:00Z and "+
		"2026-03-10T12:01:00Z were counted, not recorded one by one; the last: refusal 499", got[2].Detail)
	require.Contains(t, got[3].Detail, "later; further refusals")

	// At close, the counts still open are written.
	for range 3 {
		require.Equal(t, http.StatusNoContent, report("message.resend", "at close"))
	}
	b.api.Close()
	got = b.entries(t)
	require.Len(t, got, 5)
	require.Contains(t, got[4].Detail, "3 more refusals of message.resend")

	grown := fileSize(t, b.db) - before
	t.Logf("the store grew by %d bytes", grown)
	require.Less(t, grown, int64(1<<20))
}
