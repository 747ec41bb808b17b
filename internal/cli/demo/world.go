package demo

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/receiver"
)

// world is the demo's landscape: local HTTP receivers, exec scripts, and
// the ERP's check-back endpoint.
type world struct {
	dir     string
	servers []*http.Server
}

func newWorld(dir string) *world { return &world{dir: dir} }

// start launches the receivers and writes the configuration that names them.
func (w *world) start() (*config.Config, string, error) {
	// WMS accepts everything, on two instances.
	wms1, err := w.serve(func([]byte) (int, string) { return http.StatusOK, "" })
	if err != nil {
		return nil, "", err
	}
	wms2, err := w.serve(func([]byte) (int, string) { return http.StatusAccepted, "" })
	if err != nil {
		return nil, "", err
	}
	// BILLING refuses invoices it cannot book: a permanent error.
	billing, err := w.serve(func(body []byte) (int, string) {
		if strings.Contains(string(body), "currency=XXX") {
			return http.StatusUnprocessableEntity, "unknown currency XXX"
		}
		return http.StatusOK, ""
	})
	if err != nil {
		return nil, "", err
	}
	// CRM is down for maintenance: transient errors, retried later.
	crm, err := w.serve(func([]byte) (int, string) {
		return http.StatusServiceUnavailable, "maintenance until 06:00"
	})
	if err != nil {
		return nil, "", err
	}
	// SHIPPING rejects a malformed label request: permanent, on an EO queue.
	shipping, err := w.serve(func(body []byte) (int, string) {
		if strings.Contains(string(body), "weight=-") {
			return http.StatusBadRequest, "weight must be positive"
		}
		return http.StatusOK, ""
	})
	if err != nil {
		return nil, "", err
	}
	// ERP answers the check-back of its transactional sends (§9) from its
	// order book: order 4797 was booked, 4798 was cancelled, and of 4799
	// it knows nothing (the ERP crashed before it booked or cancelled it).
	erpCheck, err := w.serve(func(body []byte) (int, string) {
		switch {
		case strings.Contains(string(body), `"X-Order":"4797"`):
			return http.StatusOK, `{"state":"commit"}`
		case strings.Contains(string(body), `"X-Order":"4798"`):
			return http.StatusOK, `{"state":"rollback"}`
		}
		return http.StatusOK, `{"state":"unknown"}`
	})
	if err != nil {
		return nil, "", err
	}
	erpCheck = strings.TrimSuffix(erpCheck, "/in") + "/tx-check"
	archiveDir := filepath.Join(w.dir, "archive")
	if err := os.MkdirAll(archiveDir, 0o755); err != nil {
		return nil, "", err
	}
	// ARCHIVE is a script; a payload it cannot survive kills the engine that
	// runs it, as a crashing native library would.
	script := filepath.Join(w.dir, "archive.sh")
	body := `#!/bin/sh
payload=$(cat)
case "$payload" in
  *POISON*) kill -9 "$PPID"; exit 1 ;;
esac
printf '%s' "$payload" > "` + archiveDir + `/$QUEUECTL_MESSAGE_ID"
`
	if err := receiver.WriteExecutable(script, []byte(body)); err != nil {
		return nil, "", err
	}
	yaml := fmt.Sprintf(`engine:
  workers: 8
  retry: {count: 3, interval: 10m, backoff: exponential, max_interval: 1h}
  shutdown_timeout: 5s
receivers:
  WMS:      {type: http, urls: [%q, %q], timeout: 5s}
  BILLING:  {type: http, urls: [%q], timeout: 5s}
  CRM:      {type: http, urls: [%q], timeout: 5s}
  SHIPPING: {type: http, urls: [%q], timeout: 5s}
  ARCHIVE:  {type: exec, command: [%q], timeout: 10s}
routes:
  - {sender: ERP, interface: OrderCreate, receivers: [WMS, ARCHIVE]}
  - {sender: ERP, interface: InvoiceCreate, receivers: [BILLING]}
  - {sender: SHOP, interface: CustomerUpdate, receivers: [CRM]}
  - {sender: SHOP, interface: LabelRequest, receivers: [SHIPPING]}
  - {sender: LAB, interface: SampleResult, receivers: [ARCHIVE]}
senders:
  ERP: {check_url: %q}
tx: {check_after: 300ms, check_interval: 1s, max_checks: 3, check_timeout: 1s}
`, wms1, wms2, billing, crm, shipping, script, erpCheck)
	file := filepath.Join(w.dir, "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		return nil, "", err
	}
	cfg, err := config.LoadFile(file)
	return cfg, file, err
}

// serve starts a local HTTP receiver that answers with handle's status and text.
func (w *world) serve(handle func(body []byte) (int, string)) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("demo: start a local receiver: %w", err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			status, text := handle(body)
			rw.WriteHeader(status)
			io.WriteString(rw, text)
		}),
	}
	go srv.Serve(ln)
	w.servers = append(w.servers, srv)
	return "http://" + ln.Addr().String() + "/in", nil
}

func (w *world) close() {
	for _, s := range w.servers {
		s.Close()
	}
}
