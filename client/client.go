package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// DefaultUserAgent is the User-Agent of a client's requests unless
// WithUserAgent names another.
const DefaultUserAgent = "queuectl-go-client"

// Client sends messages to one queuectl server. It is safe for concurrent
// use; make one and share it.
type Client struct {
	base   string // http(s)://host:port[/path], or http://queuectl for a socket
	target string // the target as given, for error messages
	token  string
	agent  string
	http   *http.Client
	retry  RetryPolicy
	// keys: make a key for a message that has none, so that it may be
	// sent again (WithoutGeneratedKeys).
	keys  bool
	sleep func(ctx context.Context, d time.Duration) error
}

// An Option configures a Client.
type Option func(*options)

type options struct {
	token      string
	tokenFile  string
	tlsConfig  *tls.Config
	caFile     string
	httpClient *http.Client
	retry      RetryPolicy
	agent      string
	noKeys     bool
	sleep      func(ctx context.Context, d time.Duration) error
}

// WithToken sends the bearer token with every request. Over TCP the server
// needs one of the producer role (`queuectl token create NAME --role
// producer`); its unix socket, protected by its file mode, needs none.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithTokenFile reads the bearer token from a file, as the command line's
// --token-file does: its first line, without the spaces around it. New
// reports a file it cannot read, or an empty one.
func WithTokenFile(path string) Option {
	return func(o *options) { o.tokenFile = path }
}

// WithTLSConfig sets the TLS configuration of an https target, for a client
// certificate or a server name, say. The client uses a copy.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(o *options) { o.tlsConfig = cfg }
}

// WithCAFile trusts the CA certificates of a PEM file, instead of the
// system's, for an https target: the CA that signed the server's
// certificate. New reports a file it cannot read.
func WithCAFile(path string) Option {
	return func(o *options) { o.caFile = path }
}

// WithHTTPClient makes requests with a copy of hc: its Transport, Timeout,
// Jar and CheckRedirect. For a unix:// target, or with WithTLSConfig or
// WithCAFile, its Transport must be nil or an *http.Transport, which the
// client clones to dial the socket or to trust the CA; any other
// RoundTripper is used as it is, and New refuses those options with it.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.httpClient = hc }
}

// WithRetry sets the retry policy; see RetryPolicy for what is retried.
func WithRetry(p RetryPolicy) Option {
	return func(o *options) { o.retry = p }
}

// WithUserAgent replaces DefaultUserAgent as the User-Agent of requests.
func WithUserAgent(ua string) Option {
	return func(o *options) { o.agent = ua }
}

// WithoutGeneratedKeys stops the client from making a key for a message
// sent without one. Such a send is then tried again only when its request
// surely never reached the server (the connection could not be made): after
// any other failure it may have been stored, and a second request could
// store it twice. A send whose message has a Key is retried either way.
func WithoutGeneratedKeys() Option {
	return func(o *options) { o.noKeys = true }
}

// targetForms are the forms a target is written in, for errors.
const targetForms = "http://host:port, https://host:port or unix:///path/to/queuectl.db.sock"

// New returns a client for the server at target: http://host:port,
// https://host:port, or unix:///path/to/queuectl.db.sock for the socket a
// serve on a store file listens on — the forms the command line's --server
// takes. It makes no request.
func New(target string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	c := &Client{target: target, token: o.token, agent: o.agent, retry: o.retry.withDefaults(),
		keys: !o.noKeys, sleep: o.sleep}
	if c.agent == "" {
		c.agent = DefaultUserAgent
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	if err := c.retry.check(); err != nil {
		return nil, err
	}
	scheme, socket, err := c.parseTarget(target)
	if err != nil {
		return nil, err
	}
	if o.tokenFile != "" {
		if c.token, err = readToken(o.tokenFile); err != nil {
			return nil, err
		}
	}
	if c.http, err = o.httpClientFor(scheme, socket); err != nil {
		return nil, err
	}
	return c, nil
}

// parseTarget sets c.base and returns the target's scheme and, for unix,
// the socket's path.
func (c *Client) parseTarget(target string) (scheme, socket string, err error) {
	if !strings.Contains(target, "://") {
		return "", "", invalidf("target %q names no scheme; a target is %s (did you mean http://%s?)",
			target, targetForms, strings.TrimPrefix(target, "//"))
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", "", invalidf("target %q is not a URL: %v; a target is %s", target, errors.Unwrap(err), targetForms)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", invalidf("target %q: a target has no user, query or fragment; a target is %s", target, targetForms)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return "", "", invalidf("target %q names no host; a target is %s", target, targetForms)
		}
		c.base = u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
		return u.Scheme, "", nil
	case "unix":
		// unix://dir/q.db.sock is the relative path dir/q.db.sock, as the
		// command line reads it.
		socket = u.Host + u.Path
		if socket == "" {
			return "", "", invalidf("target %q names no socket; write unix:///path/to/queuectl.db.sock", target)
		}
		c.base = "http://queuectl"
		return u.Scheme, socket, nil
	}
	return "", "", invalidf("target %q: scheme %q is not supported; a target is %s", target, u.Scheme, targetForms)
}

// httpClientFor builds the HTTP client of a target: the caller's, or one
// of its own, with the socket's dialer and the TLS settings put into (a
// clone of) its transport.
func (o *options) httpClientFor(scheme, socket string) (*http.Client, error) {
	hc := &http.Client{
		// The API never redirects; following one would send a POST on as
		// a GET, or a token to another host.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if o.httpClient != nil {
		c := *o.httpClient
		if c.CheckRedirect == nil {
			c.CheckRedirect = hc.CheckRedirect
		}
		hc = &c
	}
	withTLS := o.tlsConfig != nil || o.caFile != ""
	if withTLS && scheme != "https" {
		return nil, invalidf("TLS options need an https:// target")
	}
	if socket == "" && !withTLS {
		return hc, nil
	}
	var tr *http.Transport
	switch t := hc.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	default:
		return nil, invalidf("the HTTP client's transport is a %T; a unix:// target and the TLS options need an *http.Transport (or none)", t)
	}
	if socket != "" {
		// A socket is reached directly: no proxy stands in between.
		tr.Proxy = nil
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}
	}
	if withTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.tlsConfig != nil {
			cfg = o.tlsConfig.Clone()
		}
		if o.caFile != "" {
			pem, err := os.ReadFile(o.caFile)
			if err != nil {
				return nil, fmt.Errorf("CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, invalidf("CA file %s holds no PEM certificate", o.caFile)
			}
			cfg.RootCAs = pool
		}
		tr.TLSClientConfig = cfg
	}
	hc.Transport = tr
	return hc, nil
}

// Close closes the connections the client keeps open for its next
// requests. A client may still be used after Close.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// readToken reads a token file: its first line, trimmed.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if token := strings.TrimSpace(line); token != "" {
		return token, nil
	}
	return "", invalidf("token file %s is empty", path)
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
