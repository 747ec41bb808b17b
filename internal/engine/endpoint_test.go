package engine_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/queuectl/queuectl/internal/config"
)

// arrival is one request an endpoint received.
type arrival struct {
	ID      string // X-Queuectl-Message-Id
	Payload string
	Code    int // the status answered; 0 while the request is still open
}

// endpoint is a real HTTP receiver instance. It records each request in
// arrival order, which deliveries overlapped, and answers with the status
// its answer function returns (200 without one). answer may block: it gets
// the request's context, which ends when the engine gives up on it.
type endpoint struct {
	b   *testBundle
	srv *httptest.Server

	mu       sync.Mutex
	arrivals []arrival
	active   map[string]bool            // ids being delivered now
	overlap  map[string]map[string]bool // id -> ids delivered at the same time
	answer   func(r *http.Request, a arrival, nth int) int
}

// newEndpoint starts an endpoint and configures it as receiver name.
func (b *testBundle) newEndpoint(t *testing.T, name string) *endpoint {
	t.Helper()
	ep := &endpoint{b: b, active: map[string]bool{}, overlap: map[string]map[string]bool{}}
	ep.srv = httptest.NewServer(http.HandlerFunc(ep.serve))
	t.Cleanup(ep.srv.Close)
	b.cfg.Receivers[name] = config.Receiver{Type: "http", URLs: []string{ep.srv.URL + "/in"}, Timeout: deadline}
	return ep
}

func (ep *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	// Reading the whole body also lets the server notice a client that
	// goes away, so a blocked answer sees its context end.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	a := arrival{ID: r.Header.Get("X-Queuectl-Message-Id"), Payload: string(body)}
	ep.mu.Lock()
	idx := len(ep.arrivals)
	nth := 0
	for _, prev := range ep.arrivals {
		if prev.ID == a.ID {
			nth++
		}
	}
	ep.arrivals = append(ep.arrivals, a)
	for other := range ep.active {
		ep.link(a.ID, other)
		ep.link(other, a.ID)
	}
	ep.active[a.ID] = true
	answer := ep.answer
	ep.mu.Unlock()
	ep.b.poke()

	code := http.StatusOK
	if answer != nil {
		code = answer(r, a, nth)
	}

	ep.mu.Lock()
	delete(ep.active, a.ID)
	ep.arrivals[idx].Code = code
	ep.mu.Unlock()
	w.WriteHeader(code)
	ep.b.poke()
}

func (ep *endpoint) link(a, b string) {
	if ep.overlap[a] == nil {
		ep.overlap[a] = map[string]bool{}
	}
	ep.overlap[a][b] = true
}

// respond sets how the endpoint answers; nth counts the earlier requests
// for the same message, so nth 0 is the first attempt.
func (ep *endpoint) respond(fn func(r *http.Request, a arrival, nth int) int) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.answer = fn
}

// failPayload answers code to every request whose payload is p.
func (ep *endpoint) failPayload(p string, code int) {
	ep.respond(func(_ *http.Request, a arrival, _ int) int {
		if a.Payload == p {
			return code
		}
		return http.StatusOK
	})
}

func (ep *endpoint) all() []arrival {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return append([]arrival(nil), ep.arrivals...)
}

// accepted returns the payloads the endpoint accepted, in order.
func (ep *endpoint) accepted() []string {
	var out []string
	for _, a := range ep.all() {
		if a.Code >= 200 && a.Code < 300 {
			out = append(out, a.Payload)
		}
	}
	return out
}

// repeats describes the payloads the endpoint accepted more than once, with
// the message ids they came under — one id twice is a redelivery, two ids a
// message routed twice — and the history of each message the store holds.
func (ep *endpoint) repeats(t *testing.T) string {
	ids := map[string][]string{}
	var order []string
	for _, a := range ep.all() {
		if a.Code >= 200 && a.Code < 300 {
			if ids[a.Payload] == nil {
				order = append(order, a.Payload)
			}
			ids[a.Payload] = append(ids[a.Payload], a.ID)
		}
	}
	var out []string
	for _, p := range order {
		if len(ids[p]) < 2 {
			continue
		}
		out = append(out, fmt.Sprintf("%s as %v", p, ids[p]))
		for _, id := range slices.Compact(slices.Sorted(slices.Values(ids[p]))) {
			var steps []string
			for _, h := range ep.b.message(t, id).History {
				steps = append(steps, fmt.Sprintf("%s %s→%s %s %q", h.At.Format("15:04:05.000000"), h.From, h.To, h.Actor, h.Reason))
			}
			out = append(out, fmt.Sprintf("  %s: %s", id, strings.Join(steps, "; ")))
		}
	}
	return strings.Join(out, "\n")
}

// overlapped returns the ids delivered at the same time as id.
func (ep *endpoint) overlapped(id string) []string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var out []string
	for other := range ep.overlap[id] {
		out = append(out, other)
	}
	return out
}

// gate blocks answers until it is opened.
type gate chan struct{}

func (g gate) open() { close(g) }

// wait blocks until the gate opens or the request ends.
func (g gate) wait(r *http.Request) {
	select {
	case <-g:
	case <-r.Context().Done():
	}
}

// slowly is how long an endpoint takes over a delivery that the test
// expects to run alone: other deliveries that wrongly start meanwhile have
// that long to show up. It is the receiver's working time, not a wait of
// the test: a correct engine passes whatever its value.
const slowly = 200 * time.Millisecond

// busy blocks for slowly, or until stop is closed or the request ends.
func busy(r *http.Request, stop <-chan struct{}) {
	t := time.NewTimer(slowly)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	case <-r.Context().Done():
	}
}
