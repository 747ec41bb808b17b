package httpapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// limitBundle is the API over a real service, served as serve serves it:
// NewHTTPServer on a LimitListener.
type limitBundle struct {
	api   *Server
	srv   *httptest.Server
	clock *clock
	logs  *logLines
}

// logLines keeps the messages a server logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.lines = append(l.lines, line)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func setupLimits(t *testing.T, dir string, conns int, opts Options) *limitBundle {
	t.Helper()
	st, err := bolt.Open(filepath.Join(dir, "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { _ = svc.Close() })
	b := &limitBundle{clock: &clock{now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}, logs: &logLines{}}
	opts.Service, opts.Auditor, opts.Now, opts.Logger = svc, svc, b.clock.Now, slog.New(b.logs)
	b.api = New(opts)
	b.srv = httptest.NewUnstartedServer(nil)
	b.srv.Config = NewHTTPServer(b.api.Handler(true))
	b.srv.Listener = LimitListener(b.srv.Listener, conns)
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	return b
}

// raw sends head (the request line and header fields, without the blank
// line) and body on a connection of its own and returns the status and
// body of the answer.
func (b *limitBundle) raw(t *testing.T, head, body string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", b.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	// The server may answer (431) before it read all we send.
	go func() { _, _ = io.WriteString(c, head+"\r\n\r\n"+body) }()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if errors.Is(err, syscall.ECONNRESET) {
		// The server answered and closed while the request was still
		// coming: the answer may be lost with the connection.
		return 0, "reset"
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if errors.Is(err, syscall.ECONNRESET) {
		return resp.StatusCode, "reset"
	}
	require.NoError(t, err)
	return resp.StatusCode, string(got)
}

func errorCode(t *testing.T, body string) string {
	t.Helper()
	var env wire.ErrorBody
	require.NoError(t, json.Unmarshal([]byte(body), &env), body)
	return env.Error.Code
}

// A header block over 64 KiB, or more than MaxHeaderFields fields, is
// answered 431; a request within both limits is served.
func TestHeaderLimits(t *testing.T) {
	t.Parallel()
	b := setupLimits(t, t.TempDir(), MaxConnections, Options{})
	get := "GET /v1/queues HTTP/1.1\r\nHost: x\r\nConnection: close"

	// Refused: 431, or a connection reset when the server closed it
	// while the rest was still coming (an accepted request is read whole).
	refused := []int{http.StatusRequestHeaderFieldsTooLarge, 0}
	code, _ := b.raw(t, get+"\r\nX-Big: "+strings.Repeat("a", 1<<20), "")
	require.Contains(t, refused, code, "a 1 MiB header")
	code, _ = b.raw(t, get+strings.Repeat("\r\nX-A: b", 10_000), "")
	require.Contains(t, refused, code, "10,000 header fields")

	code, body := b.raw(t, get+strings.Repeat("\r\nX-A: b", MaxHeaderFields), "")
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, code, "more fields than the limit, in fewer bytes: %s", body)
	require.Equal(t, "too_large", errorCode(t, body))
	require.Contains(t, body, "at most 100 are taken")

	code, body = b.raw(t, get+strings.Repeat("\r\nX-A: b", MaxHeaderFields-3), "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = b.raw(t, get+"\r\nX-Big: "+strings.Repeat("a", 60<<10), "")
	require.Equal(t, http.StatusOK, code, body)
}

// A body that does not arrive in time is answered 408, and frees its
// connection.
func TestBodyDeadline(t *testing.T) {
	t.Parallel()
	b := setupLimits(t, t.TempDir(), MaxConnections, Options{BodyTimeout: 100 * time.Millisecond})
	code, body := b.raw(t, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000",
		`{"messages":`)
	require.Equal(t, http.StatusRequestTimeout, code, body)
	require.Equal(t, "invalid", errorCode(t, body))
	require.Contains(t, body, "the request body did not arrive within 100ms of its headers")

	// A payload edit reads its body raw, under the same deadline.
	code, body = b.raw(t, "PUT /v1/messages/01JAAAAAAAAAAAAAAAAAAAAAAA/payload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000",
		"partial")
	require.Equal(t, http.StatusRequestTimeout, code, body)
	require.Contains(t, body, "the request body did not arrive within 100ms of its headers")
}

// A listener serves at most its limit of connections at once: one more
// is served only once one of them closes.
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	const limit = 3
	b := setupLimits(t, t.TempDir(), limit, Options{})
	var held []net.Conn
	for range limit {
		c, err := net.Dial("tcp", b.srv.Listener.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		// A request that is never finished holds its connection.
		_, err = io.WriteString(c, "GET /v1/queues HTTP/1.1\r\nHost: x\r\n")
		require.NoError(t, err)
		held = append(held, c)
	}
	answered := make(chan int, 1)
	c, err := net.Dial("tcp", b.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /v1/queues HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	// Not served while the others hold every slot. (Only a server
	// without the limit answers within the wait; a slow machine makes
	// it pass, never fail.)
	select {
	case code := <-answered:
		t.Fatalf("a connection past the limit was served (%d)", code)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	require.Equal(t, http.StatusOK, <-answered, "served once a slot is free")
}

// A full disk answers 507 with code unavailable (the CLI's exit 6), and is
// logged once a minute, however many requests run into it.
func TestFullDiskIs507(t *testing.T) {
	t.Parallel()
	dir := tmpfs(t, "512k")
	b := setupLimits(t, dir, MaxConnections, Options{})
	payload := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 60<<10)))
	send := func() (int, string) {
		resp, err := http.Post(b.srv.URL+"/v1/messages", "application/json", strings.NewReader(order(payload, "")))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	var code int
	var body string
	for range 100 {
		if code, body = send(); code != http.StatusCreated && code != http.StatusOK {
			break
		}
	}
	require.Equal(t, http.StatusInsufficientStorage, code, body)
	require.Equal(t, "unavailable", errorCode(t, body))
	require.Contains(t, body, "its disk is full")
	for range 5 {
		code, _ = send()
		require.Equal(t, http.StatusInsufficientStorage, code)
	}
	full := func() []string {
		var out []string
		for _, l := range b.logs.all() {
			if strings.HasPrefix(l, "the disk is full") {
				out = append(out, l)
			}
		}
		return out
	}
	require.Len(t, full(), 1, "logged once: %q", b.logs.all())
	b.clock.advance(time.Minute)
	code, _ = send()
	require.Equal(t, http.StatusInsufficientStorage, code)
	require.Len(t, full(), 2, "and again a minute later")
	require.Contains(t, full()[1], "refused_since_last_logged=5")

	// Reads go on.
	resp, err := http.Get(b.srv.URL + "/v1/queues")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// tmpfs mounts a file system of size under a new directory for t, where
// the test may mount one (as root); else it skips.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(dir, 0o700))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system to fill (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
