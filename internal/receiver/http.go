package receiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// HTTP posts payloads to one of the receiver's instances (§8): EO deliveries
// are spread across the urls, EOIO queues stick to one url while it answers.
type HTTP struct {
	name    string
	urls    []string
	headers map[string]string
	client  *http.Client

	next   atomic.Uint64 // round robin for EO
	mu     sync.Mutex
	sticky map[string]int // EOIO queue -> url index
}

func newHTTP(name string, urls []string, headers map[string]string, timeout time.Duration) (*HTTP, error) {
	if len(urls) == 0 {
		return nil, domain.Invalidf("receivers.%s: type http needs urls", name)
	}
	for _, u := range urls {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, domain.Invalidf("receivers.%s: url %q must start with http:// or https://", name, u)
		}
	}
	return &HTTP{
		name: name, urls: urls, headers: headers,
		client: &http.Client{Timeout: timeout, Transport: NewTransport()},
		sticky: map[string]int{},
	}, nil
}

// NewTransport returns an HTTP transport of the engine's own, for its calls
// to receivers and check-back endpoints. It keeps for reuse every connection
// to an instance that deliveries had open at once — engine.workers bounds
// them; an idle one closes after 90 s — where net/http's default keeps two,
// so that the others would reconnect for each message. And nothing else in
// the process shares it: closing the idle connections of net/http's default
// transport (an HTTP server or client elsewhere in the process may) can
// break a request that is just taking one of them, and a delivery the
// receiver had already accepted would then be retried.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, math.MaxInt
	return t
}

// Deliver posts the payload. 2xx is delivered; 408, 429, 5xx, connection
// errors and timeouts are transient; any other status is permanent.
func (h *HTTP) Deliver(ctx context.Context, d Delivery) error {
	i := h.pick(d.Message)
	err := h.post(ctx, h.urls[i], d)
	if err != nil && ClassOf(err) == domain.ErrorTransient && d.Message.QoS == domain.EOIO {
		h.unstick(d.Message.Queue, i) // the next attempt tries the next instance
	}
	return err
}

func (h *HTTP) pick(m *domain.Message) int {
	if len(h.urls) == 1 {
		return 0
	}
	if m.QoS != domain.EOIO {
		return int(h.next.Add(1)-1) % len(h.urls)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.sticky[m.Queue]
	if !ok {
		i = int(h.next.Add(1)-1) % len(h.urls)
		h.sticky[m.Queue] = i
	}
	return i
}

func (h *HTTP) unstick(queue string, failed int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sticky[queue] == failed {
		h.sticky[queue] = (failed + 1) % len(h.urls)
	}
}

func (h *HTTP) post(ctx context.Context, url string, d Delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.Payload))
	if err != nil {
		return Permanent("receiver %s: %v", h.name, err)
	}
	for k, v := range d.Message.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	md := metaOf(d.Message)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-Queuectl-Message-Id", md.ID)
	req.Header.Set("X-Queuectl-Sender", md.Sender)
	req.Header.Set("X-Queuectl-Interface", md.Interface)
	req.Header.Set("X-Queuectl-App-Queue", md.AppQueue)
	req.Header.Set("X-Queuectl-Seq", md.Seq)
	if err := checkHeader(req.Header); err != nil {
		// Sending cannot work on any attempt: net/http refuses such a
		// request before it connects. A retry would only block the queue.
		return Permanent("receiver %s: %v", h.name, err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return Transient("POST %s: timed out", url)
		}
		return Transient("POST %s: %v", url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return Transient("POST %s: %s%s", url, resp.Status, bodyText(body))
	default:
		return Permanent("POST %s: %s%s", url, resp.Status, bodyText(body))
	}
}

func bodyText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return ": " + firstLine(s, 200)
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// checkHeader finds what net/http would refuse to send (RFC 9110 §5): a
// field name that is not a token, a value with a control character other
// than tab. Input rules keep these out of new messages; a message stored
// before them, or a receiver's configured header, may still hold one.
func checkHeader(h http.Header) error {
	for k, vs := range h {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
			return fmt.Errorf("header name %q is not a valid HTTP field name", k)
		}
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
					return fmt.Errorf("header %s: the value %q holds the control character %U, which HTTP cannot carry", k, v, rune(c))
				}
			}
		}
	}
	return nil
}

// isTokenChar reports whether r may appear in an HTTP token (RFC 9110 §5.6.2).
func isTokenChar(r rune) bool {
	return r < 0x7f && r > 0x20 && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
}
