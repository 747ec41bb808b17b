package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

func TestCheckListen(t *testing.T) {
	t.Parallel()
	const cert, key = "server.crt", "server.key"
	for _, c := range []struct {
		name       string
		addr       string
		cert, key  string
		tokens     bool
		insecure   bool
		refused    bool
		errContain string
	}{
		{name: "no listener", addr: ""},
		{name: "loopback v4", addr: "127.0.0.1:7870"},
		{name: "loopback v4 other", addr: "127.0.0.2:7870"},
		{name: "loopback v6", addr: "[::1]:7870"},
		{name: "localhost", addr: "localhost:7870"},
		{name: "loopback with TLS and tokens", addr: "127.0.0.1:7870", cert: cert, key: key, tokens: true},
		{name: "all interfaces", addr: "0.0.0.0:7870", refused: true, errContain: "is not a loopback address"},
		{name: "all interfaces, no host", addr: ":7870", refused: true, errContain: "is not a loopback address"},
		{name: "all v6 interfaces", addr: "[::]:7870", refused: true},
		{name: "LAN address", addr: "192.168.1.10:7870", refused: true},
		{name: "host name", addr: "queuectl.example:7870", refused: true},
		{name: "TLS without tokens", addr: "0.0.0.0:7870", cert: cert, key: key, refused: true},
		{name: "tokens without TLS", addr: "0.0.0.0:7870", tokens: true, refused: true},
		{name: "TLS and tokens", addr: "0.0.0.0:7870", cert: cert, key: key, tokens: true},
		{name: "insecure", addr: "0.0.0.0:7870", insecure: true},
		{name: "insecure with tokens", addr: "10.0.0.1:7870", tokens: true, insecure: true},
		{name: "not host:port", addr: "0.0.0.0", refused: true, errContain: "is not host:port"},
		{name: "cert without key", addr: "127.0.0.1:7870", cert: cert, refused: true, errContain: "--tls-cert and --tls-key go together"},
		{name: "key without cert", addr: "0.0.0.0:7870", key: key, tokens: true, insecure: true, refused: true},
	} {
		err := checkListen(c.addr, c.cert, c.key, c.tokens, c.insecure)
		if !c.refused {
			require.NoError(t, err, c.name)
			continue
		}
		// A usage error: exit 2.
		require.ErrorIs(t, err, domain.ErrInvalid, c.name)
		if c.errContain != "" {
			require.ErrorContains(t, err, c.errContain, c.name)
		}
	}

	err := checkListen("0.0.0.0:7870", "", "", false, false)
	require.EqualError(t, err, "--listen 0.0.0.0:7870 is not a loopback address: it needs TLS (--tls-cert, --tls-key) and tokens (server.tokens)")
	require.Contains(t, domain.HintOf(err), "--insecure")
}

// tlsBundle runs the API as serve does: trusted on a unix socket and, with
// TLS and tokens, on TCP.
type tlsBundle struct {
	addr string // host:port of the TLS listener
	sock string
	pool *x509.CertPool
}

const (
	adminToken    = "admin-token-for-the-tls-test"
	producerToken = "producer-token-for-the-tls-test"
)

func setupTLS(t *testing.T) *tlsBundle {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)

	st, err := bolt.Open(filepath.Join(dir, "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	api := httpapi.New(httpapi.Options{Service: svc, Auditor: svc, Tokens: []config.Token{
		{Name: "tls-admin", Role: "admin", SHA256: httpapi.HashToken(adminToken)},
		{Name: "tls-producer", Role: "producer", SHA256: httpapi.HashToken(producerToken)},
	}})

	// startAPI names the address it listens on in its log.
	var logBuf syncBuffer
	log := slog.New(slog.NewJSONHandler(&logBuf, nil))
	// The socket path must stay short: unix socket paths are limited.
	sockDir, err := os.MkdirTemp("", "qs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "q.db.sock")
	tlsConf, err := loadTLS(certFile, keyFile)
	require.NoError(t, err)
	tl, err := listenTCP("127.0.0.1:0", tlsConf)
	require.NoError(t, err)
	servers, _, err := startAPI(api, sock, tl, true, log)
	require.NoError(t, err)
	t.Cleanup(func() { stopAPI(servers, time.Second) })
	require.Len(t, servers, 2)

	b := &tlsBundle{sock: sock, pool: pool}
	for _, line := range bytes.Split(logBuf.Bytes(), []byte("\n")) {
		var rec struct {
			Msg     string `json:"msg"`
			Address string `json:"address"`
			TLS     bool   `json:"tls"`
		}
		if len(line) > 0 && json.Unmarshal(line, &rec) == nil && rec.Address != "" {
			require.True(t, rec.TLS)
			b.addr = rec.Address
		}
	}
	require.NotEmpty(t, b.addr, "startAPI logs the TCP address: %s", logBuf.Bytes())
	return b
}

// selfSigned writes a self-signed ECDSA certificate for 127.0.0.1 and
// localhost and its key, and returns their files and a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "queuectl test server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func (b *tlsBundle) client(t *testing.T, server, token string, cfg *tls.Config) *remote.Client {
	t.Helper()
	var tr http.RoundTripper
	if cfg != nil {
		tr = &http.Transport{TLSClientConfig: cfg}
	}
	c, err := remote.New(remote.Options{Server: server, Token: token, Transport: tr, Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func TestTLSEndToEnd(t *testing.T) {
	t.Parallel()
	b := setupTLS(t)
	ctx := context.Background()
	trust := &tls.Config{RootCAs: b.pool, MinVersion: tls.VersionTLS12}

	// A producer sends over TLS; an admin reads, tunes and checks the audit log.
	producer := b.client(t, "https://"+b.addr, producerToken, trust)
	msgs, err := producer.Send(ctx, []domain.SendRequest{{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("over TLS\x00")}})
	require.NoError(t, err)
	require.Len(t, msgs, 1)

	adm := b.client(t, "https://"+b.addr, adminToken, trust)
	p, err := adm.Payload(ctx, msgs[0].ID)
	require.NoError(t, err)
	require.Equal(t, []byte("over TLS\x00"), p)
	var queues []string
	require.NoError(t, adm.Queues(ctx, admin.QueueFilter{}, func(q *domain.Queue) error {
		queues = append(queues, q.Name)
		return nil
	}))
	require.Equal(t, []string{msgs[0].Queue}, queues)
	e, err := adm.Tune(ctx, admin.TuneParams{Param: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: "4"})
	require.NoError(t, err)
	require.Equal(t, 4, e.Value)
	var actors []string
	require.NoError(t, adm.Audit(ctx, admin.AuditFilter{}, func(e *domain.AuditEntry) error {
		actors = append(actors, e.Actor+" "+e.Source+" "+e.Action)
		return nil
	}))
	require.Equal(t, []string{"tls-admin 127.0.0.1 tune.set"}, actors)

	// The producer may not read; no token is no access.
	_, err = producer.Message(ctx, msgs[0].ID)
	require.ErrorIs(t, err, domain.ErrPermission)
	_, err = b.client(t, "https://"+b.addr, "", trust).Message(ctx, msgs[0].ID)
	require.ErrorIs(t, err, domain.ErrPermission)

	// The unix socket beside it is trusted: no token needed.
	sock := b.client(t, "unix://"+b.sock, "", nil)
	m, err := sock.Message(ctx, msgs[0].ID)
	require.NoError(t, err)
	require.Equal(t, msgs[0].ID, m.ID)
	fi, err := os.Stat(b.sock)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestTLSRefusesPlainAndUntrusted(t *testing.T) {
	t.Parallel()
	b := setupTLS(t)
	ctx := context.Background()

	// Plain HTTP to the TLS port gets no answer from the API.
	plain := b.client(t, "http://"+b.addr, adminToken, nil)
	_, err := plain.Tuning(ctx)
	require.Error(t, err)
	require.NotErrorIs(t, err, domain.ErrPermission)
	require.False(t, plain.Healthy(ctx))

	// A client that does not trust the certificate refuses the server.
	untrusted := b.client(t, "https://"+b.addr, adminToken, &tls.Config{MinVersion: tls.VersionTLS12})
	_, err = untrusted.Tuning(ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.ErrorContains(t, err, "certificate")

	// The server speaks TLS 1.2 at least.
	old := b.client(t, "https://"+b.addr, adminToken, &tls.Config{RootCAs: b.pool, MaxVersion: tls.VersionTLS11})
	_, err = old.Tuning(ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)

	// The certificate names 127.0.0.1, not another host.
	wrongName := b.client(t, "https://"+b.addr, adminToken, &tls.Config{RootCAs: b.pool, ServerName: "queuectl.example"})
	_, err = wrongName.Tuning(ctx)
	require.ErrorIs(t, err, domain.ErrUnavailable)
}

func TestLoadTLSRefusesABadCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.crt"), []byte("not a certificate"), 0o600))
	_, err := loadTLS(filepath.Join(dir, "bad.crt"), filepath.Join(dir, "bad.crt"))
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "TLS certificate")
	_, err = loadTLS(filepath.Join(dir, "missing.crt"), filepath.Join(dir, "missing.key"))
	require.ErrorIs(t, err, domain.ErrInvalid)

	conf, err := loadTLS("", "")
	require.NoError(t, err)
	require.Nil(t, conf, "no certificate, plain TCP")
}

// A TCP address in use is refused by listenTCP, which serve calls before it
// opens the store, with a hint: nothing was started, no socket made.
func TestListenTCPAddressInUse(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { busy.Close() })

	_, err = listenTCP(busy.Addr().String(), nil)
	require.ErrorIs(t, err, domain.ErrUnavailable)
	require.EqualError(t, err, "listen on "+busy.Addr().String()+": the address is in use by another process")
	require.Contains(t, domain.HintOf(err), "is another 'queuectl serve' running there?")

	tl, err := listenTCP("", nil)
	require.NoError(t, err)
	require.Nil(t, tl, "no --listen, no listener")
}

// The socket is its owner's alone from the moment it has its name: bound
// in a private directory, made 0600, then moved into place. Clients reach it
// there, and nothing of the move is left behind.
func TestStartAPISocketIsPrivate(t *testing.T) {
	t.Parallel()
	sockDir, err := os.MkdirTemp("", "qs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "q.db.sock")

	servers, _, err := startAPI(httpapi.New(httpapi.Options{}), sock, nil, false, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { stopAPI(servers, time.Second) })
	st, err := os.Stat(sock)
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket|0o600, st.Mode())
	entries, err := os.ReadDir(sockDir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the socket: the private directory is gone")
	c, err := remote.New(remote.Options{Server: "unix://" + sock})
	require.NoError(t, err)
	require.True(t, c.Healthy(context.Background()), "the socket answers at its name")
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines to log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// A node is ready between the end of crash recovery and the stop signal;
// a recovery that ends after the signal does not make it ready again.
func TestNodeState(t *testing.T) {
	t.Parallel()
	var s nodeState
	require.False(t, s.ready(), "starting")
	s.started()
	require.True(t, s.ready())
	s.stopping()
	require.False(t, s.ready())

	var late nodeState
	late.stopping()
	late.started()
	require.False(t, late.ready(), "stopped during recovery")
}

// failingListener accepts nothing: its Accept fails as a listener whose
// file descriptors ran out, or whose socket was closed under it, does.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept: too many open files")
}

func TestServeOnReportsAListenerFailure(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	failed := make(chan error, 1)
	go serveOn(newHTTPServer(http.NotFoundHandler()), failingListener{l}, failed)
	select {
	case err := <-failed:
		require.ErrorContains(t, err, "too many open files")
		require.ErrorContains(t, err, l.Addr().String(), "the failure names the listener")
	case <-time.After(time.Minute):
		t.Fatal("a failing listener was not reported")
	}
}
