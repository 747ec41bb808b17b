package client_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"
)

// proxy stands between a client and a real server and lets a test decide,
// request by request, what reaches the server and what the client hears.
type proxy struct {
	url string
	mu  sync.Mutex
	// seen are the requests that reached the proxy, in order.
	seen []seenRequest
}

// seenRequest is what the proxy saw of a request.
type seenRequest struct {
	header http.Header
	body   []byte
}

// fault decides request n (1-based). It may answer the request itself,
// forward it and spoil the answer, or return false to forward it untouched.
type fault func(n int, w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) bool

// newProxy starts a proxy to s with the fault f (nil: none).
func newProxy(t *testing.T, s *server, f fault) *proxy {
	t.Helper()
	target, err := url.Parse(s.url)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &proxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		p.seen = append(p.seen, seenRequest{header: r.Header.Clone(), body: body})
		n := len(p.seen)
		p.mu.Unlock()
		if f != nil && f(n, w, r, rp.ServeHTTP) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// requests returns what the proxy saw.
func (p *proxy) requests() []seenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenRequest(nil), p.seen...)
}

// unavailableOnce answers the first request 503, as a server whose store is
// down does, without forwarding it.
func unavailableOnce(n int, w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) bool {
	if n > 1 {
		return false
	}
	answerUnavailable(w)
	return true
}

// alwaysUnavailable answers every request 503.
func alwaysUnavailable(_ int, w http.ResponseWriter, _ *http.Request, _ http.HandlerFunc) bool {
	answerUnavailable(w)
	return true
}

func answerUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"the store is unreachable"}}`)
}

// lostAnswerOnce lets the first request reach the server, which acts on it,
// and then breaks the connection before the client hears the answer: the
// request that timed out, for the client.
func lostAnswerOnce(n int, w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) bool {
	if n > 1 {
		return false
	}
	forward(httptest.NewRecorder(), r)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
	return true
}
