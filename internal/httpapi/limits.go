package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/net/netutil"

	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// The limits of the API's HTTP servers: what one client can make a server
// hold — memory for headers, connections, a request that never ends.
const (
	// MaxHeaderBytes bounds a request's header block (request line
	// included); a larger one is answered 431.
	MaxHeaderBytes = 64 << 10
	// MaxHeaderFields bounds the header fields of a request; more are
	// answered 431.
	MaxHeaderFields = 100
	// MaxConnections bounds the connections a listener serves at once;
	// further ones wait in the kernel's backlog until one closes.
	MaxConnections = 256
	// BodyTimeout is how long a request's body may take to arrive, from
	// the end of its headers; a slower one is answered 408.
	BodyTimeout = time.Minute
	// headerTimeout is how long a request's headers may take to arrive.
	headerTimeout = 10 * time.Second
	// noSpaceLogEvery is how often a full disk is logged while requests
	// keep running into it.
	noSpaceLogEvery = time.Minute
)

// NewHTTPServer returns the http.Server that serves h with the API's
// limits. Serve it on a listener from LimitListener.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: headerTimeout,
		// The body's deadline is set per request (BodyTimeout); this
		// bounds a request as a whole.
		ReadTimeout:  5 * time.Minute,
		WriteTimeout: 5 * time.Minute,
		IdleTimeout:  2 * time.Minute,
	}
}

// LimitListener returns l serving at most n connections at once
// (MaxConnections for serve).
func LimitListener(l net.Listener, n int) net.Listener {
	return netutil.LimitListener(l, n)
}

// limited applies the limits of one request that the server itself does
// not: the count of its header fields, and its body's deadline.
func (s *Server) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := 0
		for _, v := range r.Header {
			fields += len(v)
		}
		if fields > MaxHeaderFields {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestHeaderFieldsTooLarge, wire.ErrorBody{Error: wire.ErrorDetail{Code: "too_large",
				Message: fmt.Sprintf("the request has %d header fields; at most %d are taken", fields, MaxHeaderFields)}})
			return
		}
		// A handler that reads no body is not held up by it: the
		// deadline only bounds reads.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
		next.ServeHTTP(w, r)
	})
}

// errBodyTimeout marks a request body that did not arrive in time.
var errBodyTimeout = errors.New("body timeout")

// bodyError is the error of reading a request's body that failed with err.
func (s *Server) bodyError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &bodyTimeoutError{domain.Invalidf("the request body did not arrive within %s of its headers", s.opts.BodyTimeout)}
	}
	return domain.Invalidf("request body: %v", err)
}

// bodyTimeoutError is a request body that did not arrive in time: invalid,
// answered 408.
type bodyTimeoutError struct{ error }

func (e *bodyTimeoutError) Unwrap() []error { return []error{e.error, errBodyTimeout} }

// noteNoSpace logs, at most once per noSpaceLogEvery, that a request ran
// into a full disk: every request that writes fails until space is freed,
// and one line a request would flood the log.
func (s *Server) noteNoSpace(err error) {
	now := s.opts.Now()
	s.noSpaceMu.Lock()
	due := s.noSpaceLogged.IsZero() || now.Sub(s.noSpaceLogged) >= noSpaceLogEvery
	refused := 0
	if due {
		s.noSpaceLogged, refused, s.noSpaceRefused = now, s.noSpaceRefused, 0
	} else {
		s.noSpaceRefused++
	}
	s.noSpaceMu.Unlock()
	if due {
		s.opts.Logger.Error("the disk is full: requests that write are refused with 507 until space is freed",
			"err", err, "refused_since_last_logged", refused)
	}
}
