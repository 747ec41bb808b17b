package client_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, target := range []string{
		"http://127.0.0.1:7870", "https://queuectl.example:7870", "http://[::1]:7870/", "https://host/prefix",
		"unix:///var/lib/queuectl/queuectl.db.sock", "unix://data/queuectl.db.sock",
	} {
		c, err := client.New(target)
		require.NoError(t, err, target)
		require.NoError(t, c.Close())
	}
	for target, want := range map[string]string{
		"127.0.0.1:7870":             `names no scheme; a target is http://host:port, https://host:port or unix:///path/to/queuectl.db.sock (did you mean http://127.0.0.1:7870?)`,
		"ftp://host:21":              `scheme "ftp" is not supported`,
		"http://":                    "names no host",
		"unix://":                    "names no socket",
		"http://user:pw@host:7870":   "a target has no user, query or fragment",
		"http://host:7870/?x=1":      "a target has no user, query or fragment",
		"http://host:7870/#frag":     "a target has no user, query or fragment",
		"http://host:port:7870/\x7f": "is not a URL",
	} {
		_, err := client.New(target)
		require.ErrorIs(t, err, client.ErrInvalid, target)
		require.ErrorContains(t, err, want, target)
	}

	// A token file holds a token.
	empty := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(empty, []byte(" \n"), 0o600))
	_, err := client.New("http://127.0.0.1:7870", client.WithTokenFile(empty))
	require.ErrorIs(t, err, client.ErrInvalid)
	require.ErrorContains(t, err, "is empty")
	_, err = client.New("http://127.0.0.1:7870", client.WithTokenFile(filepath.Join(t.TempDir(), "none")))
	require.ErrorIs(t, err, os.ErrNotExist)

	// TLS options are for https, and for a transport they can configure.
	_, err = client.New("http://127.0.0.1:7870", client.WithCAFile("ca.crt"))
	require.ErrorIs(t, err, client.ErrInvalid)
	_, err = client.New("https://127.0.0.1:7870", client.WithCAFile(filepath.Join(t.TempDir(), "none.crt")))
	require.ErrorIs(t, err, os.ErrNotExist)
	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	_, err = client.New("https://127.0.0.1:7870", client.WithCAFile(notPEM))
	require.ErrorContains(t, err, "holds no PEM certificate")
	other := &http.Client{Transport: roundTripFunc(http.DefaultTransport.RoundTrip)}
	_, err = client.New("unix:///q.db.sock", client.WithHTTPClient(other))
	require.ErrorContains(t, err, "need an *http.Transport")
	_, err = client.New("https://127.0.0.1:7870", client.WithHTTPClient(other), client.WithTLSConfig(&tls.Config{}))
	require.ErrorContains(t, err, "need an *http.Transport")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUnixSocket: the socket beside a store file needs no token.
func TestUnixSocket(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	c, err := client.New(s.socket)
	require.NoError(t, err)
	defer c.Close()
	sent, err := c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.NoError(t, err)
	require.NotNil(t, s.message(t, sent.ID))

	// A client of the caller's, with a transport the client can point
	// at the socket.
	c, err = client.New(s.socket, client.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
	require.NoError(t, err)
	_, err = c.Send(context.Background(), client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}})
	require.NoError(t, err)
}

func TestTLS(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{tls: true})
	m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}
	ctx := context.Background()

	c, err := client.New(s.url, client.WithToken(producerToken), client.WithCAFile(s.caFile))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.NoError(t, err)

	pem, err := os.ReadFile(s.caFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	c, err = client.New(s.url, client.WithToken(producerToken), client.WithTLSConfig(&tls.Config{RootCAs: pool}))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.NoError(t, err)

	// A certificate the client does not trust is not trusted on a
	// second attempt either: the error says why, at once.
	var waits waitLog
	c, err = client.New(s.url, client.WithToken(producerToken), client.WithSleep(waits.sleep))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	var verify *tls.CertificateVerificationError
	require.ErrorAs(t, err, &verify)
	requireKinds(t, err)
	require.ErrorContains(t, err, s.url)
	require.Empty(t, waits.all())
}

// TestRequestHeaders: what every request says of itself.
func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	s := serveT(t, serveOptions{})
	p := newProxy(t, s, nil)
	m := client.Message{QoS: client.EO, Sender: "SHOP", Receivers: []string{"WMS"}}
	ctx := context.Background()

	c, err := client.New(p.url, client.WithToken(producerToken))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.NoError(t, err)
	tokenFile := filepath.Join(t.TempDir(), "producer.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(producerToken+"\n"), 0o600))
	c, err = client.New(p.url, client.WithTokenFile(tokenFile), client.WithUserAgent("shop/1.2"))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.NoError(t, err)

	reqs := p.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, client.DefaultUserAgent, reqs[0].header.Get("User-Agent"))
	require.Equal(t, "shop/1.2", reqs[1].header.Get("User-Agent"))
	for _, r := range reqs {
		require.Equal(t, "Bearer "+producerToken, r.header.Get("Authorization"))
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
		require.Equal(t, "application/json", r.header.Get("Accept"))
	}

	// The caller's HTTP client carries the requests.
	var used atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err = client.New(p.url, client.WithToken(producerToken), client.WithHTTPClient(hc))
	require.NoError(t, err)
	_, err = c.Send(ctx, m)
	require.NoError(t, err)
	require.Equal(t, int32(1), used.Load())
}
