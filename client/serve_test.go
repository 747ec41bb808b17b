package client_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/client/internal/require"

	"github.com/queuectl/queuectl/client"
)

// The tests run the real `queuectl serve` in a process of its own:
// serverBinary, which TestMain builds from the repository, with the race
// detector whenever the tests have it. Each serve has a store of its own — a
// bbolt file, or a PostgreSQL schema of its own (pgURL) — and an
// environment without the test process's QUEUECTL_ variables; it listens on
// its unix socket (bbolt) and on a TCP port the system chose, which it names
// in its log.

// waitLimit bounds every wait on a server: a test fails when what it waits
// for has not happened by then.
const waitLimit = 30 * time.Second

// The tokens of every server the tests start, by role.
const (
	producerToken = "producer-token-of-the-client-tests"
	monitorToken  = "monitor-token-of-the-client-tests"
	adminToken    = "admin-token-of-the-client-tests"
)

// baseConfig is every server's configuration: receivers that deliver to
// nowhere, and a token per role.
var baseConfig = fmt.Sprintf(`receivers:
  WMS: {type: discard}
  ARCHIVE: {type: discard}
server:
  tokens:
    - {name: shop, role: producer, sha256: %s}
    - {name: watch, role: monitor, sha256: %s}
    - {name: ops, role: admin, sha256: %s}
`, hash(producerToken), hash(monitorToken), hash(adminToken))

func hash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// serveOptions say what server to start.
type serveOptions struct {
	// pg is the URL of a PostgreSQL store; empty: a bbolt file.
	pg string
	// config is YAML added to baseConfig.
	config string
	// tls serves TCP with TLS, on a certificate for 127.0.0.1 whose CA is
	// the server's caFile.
	tls bool
}

// server is one running serve.
type server struct {
	url    string // http(s)://127.0.0.1:PORT
	socket string // unix:///…/queuectl.db.sock; empty on PostgreSQL
	caFile string // with TLS: the CA of the server's certificate
	log    *serveLog
	stop   func() error
}

// startServe starts a server and waits until it listens.
func startServe(o serveOptions) (*server, error) {
	// A socket's path must be short: not t.TempDir, which names the test.
	dir, err := os.MkdirTemp("", "qc")
	if err != nil {
		return nil, err
	}
	s := &server{log: newServeLog()}
	cfg := filepath.Join(dir, "config.yaml")
	args := []string{"--config", cfg}
	if o.pg != "" {
		args = append(args, "--store", o.pg)
	} else {
		args = append(args, "--db", filepath.Join(dir, "queuectl.db"))
	}
	args = append(args, "serve", "--listen", "127.0.0.1:0", "--log-format", "json")
	if o.tls {
		cert, key, ca, err := writeCert(dir)
		if err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		args = append(args, "--tls-cert", cert, "--tls-key", key)
		s.caFile = ca
	}
	if err := os.WriteFile(cfg, []byte(baseConfig+o.config), 0o600); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	cmd := exec.Command(serverBinary, args...)
	cmd.Env = append(serveEnviron(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	cmd.Stdout, cmd.Stderr = io.Discard, s.log
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	exited := make(chan int, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	code := -1
	s.stop = func() error {
		if code < 0 {
			// A clean stop, as an operator's: serve exits 0.
			if cmd.Process.Signal(os.Interrupt) != nil {
				_ = cmd.Process.Kill()
			}
			code = <-exited
		}
		err := os.RemoveAll(dir)
		if code != 0 {
			err = errors.Join(err, fmt.Errorf("serve exited %d:\n%s", code, s.log))
		}
		return err
	}
	listening, err := s.log.wait(exited, func(rec logRecord) bool { return rec.Msg == "api listening" && rec.Address != "" })
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	scheme := "http"
	if o.tls {
		scheme = "https"
	}
	s.url = scheme + "://" + listening.Address
	if o.pg == "" {
		s.socket = "unix://" + filepath.Join(dir, "queuectl.db.sock")
	}
	return s, nil
}

// serveEnviron is the test process's environment without the variables
// that would configure queuectl.
func serveEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUEUECTL_") {
			env = append(env, kv)
		}
	}
	return env
}

// serveT starts a server for one test, stopped when the test ends.
func serveT(t *testing.T, o serveOptions) *server {
	t.Helper()
	s, err := startServe(o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.stop()) })
	return s
}

// forEachStore runs a test against a server on a bbolt file and one on
// PostgreSQL, each with the configuration added.
func forEachStore(t *testing.T, config string, test func(t *testing.T, s *server)) {
	t.Run("bolt", func(t *testing.T) {
		t.Parallel()
		test(t, serveT(t, serveOptions{config: config}))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		test(t, serveT(t, serveOptions{pg: pgURL(t), config: config}))
	})
}

// client returns a producer's client of the server, over TCP.
func (s *server) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.url, append([]client.Option{client.WithToken(producerToken)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// storedMessage is what an operator sees of a message.
type storedMessage struct {
	ID         string            `json:"id"`
	Sender     string            `json:"sender"`
	Receivers  []string          `json:"receivers"`
	Receiver   string            `json:"receiver"`
	Interface  string            `json:"interface"`
	AppQueue   string            `json:"app_queue"`
	Queue      string            `json:"queue"`
	Seq        uint64            `json:"seq"`
	Status     string            `json:"status"`
	Key        string            `json:"key"`
	Headers    map[string]string `json:"headers"`
	LastAnswer string            `json:"last_answer"`
}

// admin makes a request of the API with the admin token and decodes its
// JSON answer into out; it returns the HTTP status.
func (s *server) admin(t *testing.T, method, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if resp.StatusCode/100 == 2 && out != nil {
		if raw, ok := out.(*[]byte); ok {
			*raw = body
		} else {
			require.NoError(t, json.Unmarshal(body, out), "%s %s: %s", method, path, body)
		}
	}
	return resp.StatusCode
}

// message returns the stored message, or nil when there is none.
func (s *server) message(t *testing.T, id string) *storedMessage {
	t.Helper()
	var m storedMessage
	switch code := s.admin(t, http.MethodGet, "/v1/messages/"+id, &m); code {
	case http.StatusOK:
		return &m
	case http.StatusNotFound:
		return nil
	default:
		t.Fatalf("GET message %s: HTTP %d", id, code)
		return nil
	}
}

// payload returns a stored message's payload.
func (s *server) payload(t *testing.T, id string) []byte {
	t.Helper()
	var p []byte
	require.Equal(t, http.StatusOK, s.admin(t, http.MethodGet, "/v1/messages/"+id+"/payload", &p))
	return p
}

// messagesOf lists the messages a sender sent (split children apart).
func (s *server) messagesOf(t *testing.T, sender string) []storedMessage {
	t.Helper()
	var page struct {
		Items []storedMessage `json:"items"`
	}
	q := url.Values{"sender": {sender}, "limit": {"1000"}}
	require.Equal(t, http.StatusOK, s.admin(t, http.MethodGet, "/v1/messages?"+q.Encode(), &page))
	return page.Items
}

// logRecord is a log line of serve: its message and the attributes the
// tests look at.
type logRecord struct {
	Msg     string `json:"msg"`
	Address string `json:"address"`
	Message string `json:"message"`
	Answer  string `json:"answer"`
}

// serveLog keeps what serve writes to stderr, one JSON record a line, and
// wakes whoever waits for a record.
type serveLog struct {
	mu   sync.Mutex
	text bytes.Buffer
	// wrote is closed, and replaced, by every write.
	wrote chan struct{}
}

func newServeLog() *serveLog { return &serveLog{wrote: make(chan struct{})} }

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text.Write(p)
	close(l.wrote)
	l.wrote = make(chan struct{})
	return len(p), nil
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// find returns the first complete record that match accepts, or a channel
// closed by the next write.
func (l *serveLog) find(match func(logRecord) bool) (logRecord, bool, <-chan struct{}) {
	l.mu.Lock()
	text, wrote := l.text.String(), l.wrote
	l.mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var rec logRecord
		if json.Unmarshal(sc.Bytes(), &rec) == nil && match(rec) {
			return rec, true, nil
		}
	}
	return logRecord{}, false, wrote
}

// wait waits for a record that match accepts; it fails when serve exits
// (exited receives its code) or nothing matched within waitLimit.
func (l *serveLog) wait(exited <-chan int, match func(logRecord) bool) (logRecord, error) {
	limit := time.NewTimer(waitLimit)
	defer limit.Stop()
	for {
		rec, ok, wrote := l.find(match)
		if ok {
			return rec, nil
		}
		select {
		case <-wrote:
		case code := <-exited:
			return logRecord{}, fmt.Errorf("serve exited %d:\n%s", code, l)
		case <-limit.C:
			return logRecord{}, fmt.Errorf("serve did not log what the test waits for within %s:\n%s", waitLimit, l)
		}
	}
}

// waitLog waits for a log record of the server that match accepts.
func (s *server) waitLog(t *testing.T, match func(logRecord) bool) logRecord {
	t.Helper()
	rec, err := s.log.wait(nil, match)
	require.NoError(t, err)
	return rec
}

// writeCert writes a CA, and a certificate for 127.0.0.1 that it signed,
// with its key, into dir.
func writeCert(dir string) (cert, key, ca string, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client tests CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caTmpl, &srvKey.PublicKey, caKey)
	if err != nil {
		return "", "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return "", "", "", err
	}
	cert, key, ca = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"), filepath.Join(dir, "ca.crt")
	err = errors.Join(
		os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), 0o600),
		os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600),
		os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600),
	)
	return cert, key, ca, err
}
