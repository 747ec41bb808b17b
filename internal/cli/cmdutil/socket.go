package cmdutil

import (
	"net"
	"net/http"

	"github.com/queuectl/queuectl/internal/admin/embedded"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/httpapi"
)

// SocketAPI serves the HTTP API on the socket of an embedded store while a
// command holds it: the wiring of admin/embedded, below the API, and
// httpapi, above the admin service, made here above both.
type SocketAPI struct {
	// MaxPayload bounds the payloads of sends through the socket.
	MaxPayload int64
}

var _ embedded.SocketServer = SocketAPI{}

// Listen listens on the socket at path, mode 0600.
func (a SocketAPI) Listen(path string) (net.Listener, error) {
	ln, err := httpapi.ListenSocket(path)
	if err != nil {
		return nil, err // not a nil *UnixListener in a non-nil interface
	}
	return ln, nil
}

// Handler is the API over svc; the socket's file mode admits only its
// owner, who may do everything.
func (a SocketAPI) Handler(svc *local.Service) http.Handler {
	return httpapi.New(httpapi.Options{Service: svc, Auditor: svc, MaxPayload: a.MaxPayload}).Handler(true)
}
