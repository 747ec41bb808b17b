// Package remote implements admin.Service over the HTTP API of a running
// `queuectl serve`, on TCP (http, https) or its unix socket, so that every
// command works the same against a server as locally.
package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// ErrNoAnswer marks a request that got no answer: the server could not be
// reached, or the connection broke before it answered.
var ErrNoAnswer = errors.New("no answer from the server")

// ErrNotSent marks a request that was never sent, because no connection
// could be made: repeating it cannot do anything twice. It is an ErrNoAnswer.
var ErrNotSent = errors.New("request not sent")

// noAnswer is the error of a request that got no answer: an error a user
// reads (kind unavailable, with its hint) that is also ErrNoAnswer, and
// ErrNotSent when it was never sent.
type noAnswer struct {
	error
	notSent bool
}

func (e noAnswer) Unwrap() error { return e.error }

func (e noAnswer) Is(target error) bool {
	return target == ErrNoAnswer || (target == ErrNotSent && e.notSent)
}

// Client talks to one server.
type Client struct {
	base  string // http://host:port, or http://unix for a socket
	where string // what error messages call the server
	token string
	actor string
	http  *http.Client
}

var _ admin.Service = (*Client)(nil)

// Options configure a client.
type Options struct {
	// Server is http(s)://host:port or unix:///path/to/queuectl.db.sock.
	Server string
	Token  string
	// Actor names the operator on a server's unix socket, which trusts
	// it (the socket's file mode admits only its owner): the history and
	// audit log then name the same operator as in embedded mode.
	Actor string
	// Timeout bounds each request; zero means none (streams may be long).
	Timeout time.Duration
	// Transport replaces the default transport (tests, TLS roots).
	Transport http.RoundTripper
	// CAFile is a PEM file of the CA certificates an https server's
	// certificate is checked against, instead of the system's.
	CAFile string
}

// serverForms are the forms a server is named in, for error messages.
const serverForms = "http://host:port, https://host:port or unix:///path/to/queuectl.db.sock"

// New returns a client for the server.
func New(opts Options) (*Client, error) {
	if !strings.Contains(opts.Server, "://") {
		// host:port parses as a scheme and an opaque part, or not at all.
		return nil, domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("server %q names no scheme; a server is %s", opts.Server, serverForms),
			fmt.Sprintf("did you mean http://%s?", strings.TrimPrefix(opts.Server, "//")))
	}
	u, err := url.Parse(opts.Server)
	if err != nil {
		return nil, domain.Invalidf("server %q is not a URL: %v; a server is %s", opts.Server, errors.Unwrap(err), serverForms)
	}
	c := &Client{token: opts.Token, actor: opts.Actor, where: opts.Server}
	tr := opts.Transport
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, domain.Invalidf("server %q names no host; a server is %s", opts.Server, serverForms)
		}
		c.base = u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
	case "unix":
		// unix://dir/h.db.sock is the relative path dir/h.db.sock, as
		// bolt://dir/h.db is a relative store path.
		path := u.Host + u.Path
		if path == "" {
			return nil, domain.Invalidf("server %q names no socket; write unix:///path/to/queuectl.db.sock", opts.Server)
		}
		c.base, c.where = "http://unix", path
		if tr == nil {
			tr = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", path)
			}}
		}
	default:
		return nil, domain.Invalidf("server %q: scheme %q is not supported; a server is %s", opts.Server, u.Scheme, serverForms)
	}
	if opts.CAFile != "" {
		if u.Scheme != "https" {
			return nil, domain.Invalidf("--ca-file %s is for an https:// server; %s is not one", opts.CAFile, opts.Server)
		}
		pool, err := readCAFile(opts.CAFile)
		if err != nil {
			return nil, err
		}
		base, ok := tr.(*http.Transport)
		if tr == nil {
			base, ok = http.DefaultTransport.(*http.Transport), true
		}
		if !ok {
			return nil, domain.Invalidf("--ca-file needs the default transport")
		}
		t := base.Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		tr = t
	}
	if tr == nil {
		tr = http.DefaultTransport
	}
	c.http = &http.Client{Transport: tr, Timeout: opts.Timeout}
	return c, nil
}

// readCAFile reads the CA certificates of a PEM file.
func readCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, domain.Invalidf("--ca-file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, domain.Invalidf("--ca-file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// plainToTLS is what Go's TLS listener answers to a plain HTTP request.
const plainToTLS = "Client sent an HTTP request to an HTTPS server"

// Close releases idle connections.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// do sends a request and decodes a JSON answer into out (unless out is nil);
// an error answer becomes an error of the matching kind.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.send(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("server %s: unreadable answer to %s %s: %w", c.where, method, path, err)
	}
	return nil
}

// rawBody is a request body sent as it is, not as JSON (a payload), with
// headers of its own.
type rawBody struct {
	data   []byte
	header http.Header
}

// send performs a request and returns a 2xx response for the caller to read.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	raw, isRaw := body.(rawBody)
	switch {
	case isRaw:
		rd = bytes.NewReader(raw.data)
	case body != nil:
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	switch {
	case isRaw:
		req.Header.Set("Content-Type", "application/octet-stream")
		for k, v := range raw.header {
			req.Header[k] = v
		}
	case body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.actor != "" {
		req.Header.Set(wire.ActorHeader, c.actor)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		notSent := errors.As(err, &op) && op.Op == "dial" && !op.Timeout() && !errors.Is(err, context.Canceled)
		if ctx.Err() != nil && !notSent {
			return nil, ctx.Err()
		}
		var unknownCA x509.UnknownAuthorityError
		var badHost x509.HostnameError
		if errors.As(err, &unknownCA) || errors.As(err, &badHost) {
			return nil, domain.WithHint(domain.ErrUnavailable,
				fmt.Sprintf("server %s: its TLS certificate is not trusted: %v", c.where, rootCause(err)),
				"install the server's CA certificate on this machine, or check the host name in --server")
		}
		return nil, noAnswer{notSent: notSent, error: domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("server %s is unreachable: %v", c.where, rootCause(err)),
			"is 'queuectl serve' running there? check --server and the context")}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.decodeError(resp)
}

func (c *Client) decodeError(resp *http.Response) error {
	var body wire.ErrorBody
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusBadRequest && bytes.Contains(raw, []byte(plainToTLS)) {
		https := "https://" + strings.TrimPrefix(c.base, "http://")
		return domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("server %s speaks TLS: use %s", c.where, https),
			"name it with https:// in --server or the context (and --ca-file or the context's ca_file for a private CA)")
	}
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		return fmt.Errorf("server %s answered %s", c.where, resp.Status)
	}
	kind, ok := map[string]error{
		"invalid": domain.ErrInvalid, "method_not_allowed": domain.ErrInvalid, "too_large": domain.ErrTooLarge, "not_found": domain.ErrNotFound,
		"conflict": domain.ErrConflict, "unauthorized": domain.ErrPermission, "forbidden": domain.ErrPermission,
		"unavailable": domain.ErrUnavailable,
	}[body.Error.Code]
	if !ok {
		return fmt.Errorf("server %s: %s", c.where, body.Error.Message)
	}
	hint := body.Error.Hint
	switch {
	case hint != "" || body.Error.Code != "unauthorized":
	case c.token == "":
		hint = "give a token with --token, --token-file or a context"
	default:
		hint = "the server knows no such token: check --token, --token-file or the context's token_file; " +
			"'queuectl token create' makes a token and the config line that grants it"
	}
	if resp.StatusCode == http.StatusPreconditionFailed {
		// An edit's If-Match named a version the payload no longer has.
		return admin.VersionMismatch(body.Error.Message, hint)
	}
	if i := body.Error.Index; i != nil && *i >= 0 {
		// A refused message of a send: rebuild the error the service
		// returned, position apart, for Send to place in the whole list.
		msg := strings.TrimPrefix(body.Error.Message, fmt.Sprintf("message %d: ", *i+1))
		return &admin.RequestError{Index: *i, Err: domain.ParseFieldError(kind, msg, body.Error.Field, hint)}
	}
	// An error about a field is rebuilt as one, for the CLI to name the
	// field by its flag.
	return domain.ParseFieldError(kind, body.Error.Message, body.Error.Field, hint)
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// Healthy reports whether the server answers its health check.
func (c *Client) Healthy(ctx context.Context) bool {
	resp, err := c.send(ctx, http.MethodGet, "/healthz", nil, nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// health asks the server's health check, which names its limits.
func (c *Client) health(ctx context.Context) (*wire.Health, error) {
	var h wire.Health
	if err := c.do(ctx, http.MethodGet, "/healthz", nil, nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// MaxPayload returns the server's engine.max_payload in bytes.
func (c *Client) MaxPayload(ctx context.Context) (int64, error) {
	h, err := c.health(ctx)
	if err != nil {
		return 0, err
	}
	if h.MaxPayload <= 0 {
		return domain.DefaultMaxPayload, nil
	}
	return h.MaxPayload, nil
}
