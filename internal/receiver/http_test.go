package receiver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/receiver"
)

// request is what an instance received.
type request struct {
	header http.Header
	body   []byte
}

// instance is one endpoint of an http receiver: it records what it gets and
// answers with the status its respond function picks (200 when nil).
type instance struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []request
	respond  func(r *http.Request) (int, string)
}

func newInstance(t *testing.T) *instance {
	t.Helper()
	in := &instance{}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		in.mu.Lock()
		in.requests = append(in.requests, request{header: r.Header.Clone(), body: body})
		respond := in.respond
		in.mu.Unlock()
		code, text := http.StatusOK, ""
		if respond != nil {
			code, text = respond(r)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(in.srv.Close)
	return in
}

func (in *instance) url() string { return in.srv.URL + "/in" }

func (in *instance) answer(fn func(r *http.Request) (int, string)) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.respond = fn
}

func (in *instance) received() []request {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]request(nil), in.requests...)
}

type httpBundle struct {
	inst []*instance
	rcv  receiver.Receiver
}

// setupHTTP starts n instances and an http receiver with one url per instance.
func setupHTTP(t *testing.T, n int, rc config.Receiver) *httpBundle {
	t.Helper()
	b := &httpBundle{}
	for range n {
		in := newInstance(t)
		b.inst = append(b.inst, in)
		rc.URLs = append(rc.URLs, in.url())
	}
	rc.Type = "http"
	r, err := receiver.New("WMS", rc)
	require.NoError(t, err)
	b.rcv = r
	return b
}

func deliver(t *testing.T, r receiver.Receiver, m *domain.Message, payload []byte) error {
	t.Helper()
	return r.Deliver(context.Background(), receiver.Delivery{Message: m, Payload: payload, Attempt: 1})
}

func TestHTTPStatusClasses(t *testing.T) {
	t.Parallel()

	tests := []struct {
		code int
		want domain.ErrorClass // "" is delivered
	}{
		{200, ""}, {201, ""}, {202, ""}, {204, ""},
		{408, domain.ErrorTransient}, {429, domain.ErrorTransient},
		{500, domain.ErrorTransient}, {502, domain.ErrorTransient}, {503, domain.ErrorTransient},
		{400, domain.ErrorPermanent}, {401, domain.ErrorPermanent}, {404, domain.ErrorPermanent},
		{409, domain.ErrorPermanent}, {422, domain.ErrorPermanent},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			t.Parallel()
			b := setupHTTP(t, 1, config.Receiver{})
			b.inst[0].answer(func(*http.Request) (int, string) {
				return tt.code, "first line of the answer\nsecond line"
			})
			err := deliver(t, b.rcv, message(domain.EO, "XBTOE8B9"), []byte("x"))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, tt.want, receiver.ClassOf(err))
			// The error names the url and the status, and quotes the first line
			// of the answer only.
			require.Contains(t, err.Error(), "POST "+b.inst[0].url()+": "+strconv.Itoa(tt.code))
			require.Contains(t, err.Error(), ": first line of the answer")
			require.NotContains(t, err.Error(), "second line")
		})
	}
}

func TestHTTPConnectionRefusedIsTransient(t *testing.T) {
	t.Parallel()

	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more

	r, err := receiver.New("WMS", config.Receiver{Type: "http", URLs: []string{url}})
	require.NoError(t, err)
	err = deliver(t, r, message(domain.EO, "XBTOE8B9"), []byte("x"))
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.Contains(t, err.Error(), "POST "+url)
}

func TestHTTPTimeoutIsTransient(t *testing.T) {
	t.Parallel()

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client going away only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	r, err := receiver.New("WMS", config.Receiver{Type: "http", URLs: []string{srv.URL}, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	err = deliver(t, r, message(domain.EO, "XBTOE8B9"), []byte("x"))
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.EqualError(t, err, "POST "+srv.URL+": timed out")
}

func TestHTTPCancelledDeliveryIsTransient(t *testing.T) {
	t.Parallel()

	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)

	r, err := receiver.New("WMS", config.Receiver{Type: "http", URLs: []string{srv.URL}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	err = r.Deliver(ctx, receiver.Delivery{Message: message(domain.EO, "XBTOE8B9"), Payload: []byte("x"), Attempt: 1})
	require.Error(t, err)
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
}

func TestHTTPHeadersAndPayload(t *testing.T) {
	t.Parallel()

	b := setupHTTP(t, 1, config.Receiver{Headers: map[string]string{"X-Env": "prod", "Authorization": "Bearer s3cret"}})
	payload := make([]byte, 1<<20)
	_, _ = rand.Read(payload)
	payload = append(payload, 0, 0xff, '\r', '\n', 0xc3) // not text, not UTF-8

	m := message(domain.EOIO, "XBQOE8B9ORDERS_DE")
	m.Headers = map[string]string{"X-Order": "4711", "X-Env": "from-message"}
	require.NoError(t, deliver(t, b.rcv, m, payload))

	got := b.inst[0].received()
	require.Len(t, got, 1)
	require.True(t, bytes.Equal(payload, got[0].body), "the payload arrives byte for byte")
	h := got[0].header
	require.Equal(t, m.ID, h.Get("X-Queuectl-Message-Id"))
	require.Equal(t, "ERP", h.Get("X-Queuectl-Sender"))
	require.Equal(t, "OrderCreate", h.Get("X-Queuectl-Interface"))
	require.Equal(t, "ORDERS_DE", h.Get("X-Queuectl-App-Queue"))
	require.Equal(t, "42", h.Get("X-Queuectl-Seq"))
	require.Equal(t, "4711", h.Get("X-Order"), "the message's own headers are passed on")
	require.Equal(t, "prod", h.Get("X-Env"), "a configured header wins over the message's")
	require.Equal(t, "Bearer s3cret", h.Get("Authorization"))
	require.Equal(t, "application/octet-stream", h.Get("Content-Type"))
}

// A request net/http refuses to send (a header value with CR, LF or NUL,
// from a message stored before such input was refused) can never be
// delivered: that is a permanent error, so it does not hold an EO queue up
// through all its retries. Nothing reaches the receiver.
func TestHTTPUnsendableHeaderIsPermanent(t *testing.T) {
	t.Parallel()

	b := setupHTTP(t, 1, config.Receiver{})
	for name, mod := range map[string]func(m *domain.Message){
		"CR LF in a header value":  func(m *domain.Message) { m.Headers = map[string]string{"X-A": "a\r\nX-B: b"} },
		"NUL in a header value":    func(m *domain.Message) { m.Headers = map[string]string{"X-A": "a\x00"} },
		"newline in the interface": func(m *domain.Message) { m.Interface = "Order\nCreate" },
		"space in a header name":   func(m *domain.Message) { m.Headers = map[string]string{"X A": "a"} },
	} {
		m := message(domain.EO, "XBTOE8B9")
		mod(m)
		err := deliver(t, b.rcv, m, []byte("p"))
		require.Error(t, err, name)
		require.Equal(t, domain.ErrorPermanent, receiver.ClassOf(err), "%s: %v", name, err)
		require.ErrorContains(t, err, "receiver WMS: header", name)
	}
	require.Empty(t, b.inst[0].received())
}

func TestHTTPQueuectlHeadersCannotBeForged(t *testing.T) {
	t.Parallel()

	b := setupHTTP(t, 1, config.Receiver{})
	m := message(domain.EO, "XBTOE8B9")
	m.Headers = map[string]string{"X-Queuectl-Message-Id": "forged", "X-Queuectl-Seq": "1"}
	require.NoError(t, deliver(t, b.rcv, m, nil))

	got := b.inst[0].received()
	require.Len(t, got, 1)
	require.Equal(t, m.ID, got[0].header.Get("X-Queuectl-Message-Id"))
	require.Equal(t, "42", got[0].header.Get("X-Queuectl-Seq"))
	require.Empty(t, got[0].body, "an empty payload is posted empty")
}

func TestHTTPSpreadsEOAcrossURLs(t *testing.T) {
	t.Parallel()

	b := setupHTTP(t, 3, config.Receiver{})
	for range 9 {
		require.NoError(t, deliver(t, b.rcv, message(domain.EO, "XBTOE8B9"), []byte("x")))
	}
	for i, in := range b.inst {
		require.Len(t, in.received(), 3, "instance %d", i)
	}
}

// servedBy returns the index of the instance that received the message id.
func (b *httpBundle) servedBy(t *testing.T, id string) []int {
	t.Helper()
	var out []int
	for i, in := range b.inst {
		for _, r := range in.received() {
			if r.header.Get("X-Queuectl-Message-Id") == id {
				out = append(out, i)
			}
		}
	}
	return out
}

func TestHTTPEOIOSticksToOneURLAndMovesOnAfterATransientError(t *testing.T) {
	t.Parallel()

	b := setupHTTP(t, 3, config.Receiver{})
	queue := "XBQOE8B9ORDERS_DE"

	first := message(domain.EOIO, queue)
	require.NoError(t, deliver(t, b.rcv, first, []byte("1")))
	sticky := b.servedBy(t, first.ID)
	require.Len(t, sticky, 1)
	home := sticky[0]

	// EO traffic in between moves the round robin; the EOIO queue stays.
	for range 4 {
		require.NoError(t, deliver(t, b.rcv, message(domain.EO, "XBTOE8B9"), []byte("eo")))
	}
	for range 5 {
		m := message(domain.EOIO, queue)
		require.NoError(t, deliver(t, b.rcv, m, []byte("n")))
		require.Equal(t, []int{home}, b.servedBy(t, m.ID), "EOIO sticks to the instance that answers")
	}

	// A permanent error is the message's fault, not the instance's: stay.
	b.inst[home].answer(func(*http.Request) (int, string) { return http.StatusUnprocessableEntity, "" })
	bad := message(domain.EOIO, queue)
	require.Error(t, deliver(t, b.rcv, bad, []byte("bad")))
	b.inst[home].answer(nil)
	m := message(domain.EOIO, queue)
	require.NoError(t, deliver(t, b.rcv, m, []byte("n")))
	require.Equal(t, []int{home}, b.servedBy(t, m.ID))

	// The instance goes down: the retry goes to the next one, and the queue
	// stays there.
	b.inst[home].answer(func(*http.Request) (int, string) { return http.StatusServiceUnavailable, "" })
	retried := message(domain.EOIO, queue)
	err := deliver(t, b.rcv, retried, []byte("r"))
	require.Equal(t, domain.ErrorTransient, receiver.ClassOf(err))
	require.NoError(t, deliver(t, b.rcv, retried, []byte("r")))
	served := b.servedBy(t, retried.ID)
	require.Len(t, served, 2)
	require.Equal(t, home, served[0])
	next := served[1]
	require.NotEqual(t, home, next)

	b.inst[home].answer(nil) // back up: the queue does not flap back
	for range 3 {
		m := message(domain.EOIO, queue)
		require.NoError(t, deliver(t, b.rcv, m, []byte("n")))
		require.Equal(t, []int{next}, b.servedBy(t, m.ID))
	}
}

// connCounter is an instance that answers 204 — no body, so the client has
// its connection back in its idle pool before a delivery returns — and
// records the client connections (remote addresses) requests came on. With
// gate set, requests wait until gate of them have arrived.
type connCounter struct {
	srv *httptest.Server

	mu      sync.Mutex
	conns   map[string]bool
	arrived int
	gate    int
	open    chan struct{}
}

func newConnCounter(t *testing.T, gate int) *connCounter {
	t.Helper()
	c := &connCounter{conns: map[string]bool{}, gate: gate, open: make(chan struct{})}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c.mu.Lock()
		c.conns[r.RemoteAddr] = true
		c.arrived++
		open := c.open
		if c.gate == 0 || c.arrived%c.gate == 0 {
			close(c.open)
			c.open = make(chan struct{})
		}
		c.mu.Unlock()
		select {
		case <-open:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *connCounter) connections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

func TestHTTPKeepsAConnectionForEachDeliveryInFlight(t *testing.T) {
	t.Parallel()
	const inFlight = 16 // engine.workers' default
	c := newConnCounter(t, inFlight)
	r, err := receiver.New("WMS", config.Receiver{Type: "http", URLs: []string{c.srv.URL + "/in"}})
	require.NoError(t, err)
	for round := range 2 {
		errs := make(chan error, inFlight)
		for range inFlight {
			go func() {
				errs <- r.Deliver(context.Background(), receiver.Delivery{Message: message(domain.EO, "XBTO0001"), Payload: []byte("x")})
			}()
		}
		for range inFlight {
			require.NoError(t, <-errs, "round %d", round)
		}
	}
	require.Equal(t, inFlight, c.connections(),
		"the second round of %d deliveries at once reuses the connections of the first", inFlight)
}

func TestHTTPDeliveriesDoNotShareTheDefaultTransport(t *testing.T) {
	t.Parallel()
	c := newConnCounter(t, 0)
	r, err := receiver.New("WMS", config.Receiver{Type: "http", URLs: []string{c.srv.URL + "/in"}})
	require.NoError(t, err)
	d := receiver.Delivery{Message: message(domain.EO, "XBTO0001"), Payload: []byte("x")}
	require.NoError(t, r.Deliver(context.Background(), d))
	// What an HTTP server closing elsewhere in the process does (httptest,
	// and any code that calls it): the receiver's connections stay.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	require.NoError(t, r.Deliver(context.Background(), d))
	require.Equal(t, 1, c.connections(), "both deliveries on one connection")
}
