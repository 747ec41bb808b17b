package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// errHeld says that another process holds the store.
var errHeld = errors.New("the store is held by another process")

// holding is the store while this process holds it, and the socket it
// serves meanwhile.
type holding struct {
	st   *bolt.Store
	svc  *local.Service
	srv  *http.Server
	ln   net.Listener
	sock string
}

// hold returns the local service on the store, opening it — without waiting
// for the file lock — unless calls of this process hold it already. It
// fails with errHeld when another process holds it.
func (s *Service) hold() (*local.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		h, err := openHolding(s.opts, s.opts.Socket)
		if err != nil {
			return nil, err
		}
		s.held = h
	}
	s.users++
	return s.held.svc, nil
}

// release lets the store go once the last call of this process is done.
func (s *Service) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users == 0 {
		s.held.Close()
		s.held = nil
	}
}

// openHolding opens the store for this process, without waiting for the
// file lock (errHeld), and serves its socket until Close: every process
// that holds the store serves it, so that no other command is locked out.
func openHolding(o Options, socket SocketServer) (*holding, error) {
	path := o.Path
	st, err := open(path, o.Create, o.MakeDirs, o.Created)
	if err != nil {
		return nil, err
	}
	svc := local.New(st, o.Local)
	h := &holding{st: st, svc: svc}
	if socket == nil {
		return h, nil
	}
	if err := h.serve(path+".sock", socket); err != nil {
		_ = st.Close()
		return nil, err
	}
	return h, nil
}

// open opens the bbolt file, translating its refusals: a lock held by
// another process is errHeld at once, a file that is not a queuectl store is
// unavailable (exit 6) with what to do, and so is a store that is not there
// unless create allows to make it (and created is told).
func open(path string, create, makeDirs bool, created func(string)) (*bolt.Store, error) {
	info, err := os.Stat(path)
	fresh := errors.Is(err, fs.ErrNotExist) || (err == nil && info.Mode().IsRegular() && info.Size() == 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !create:
		return nil, domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("there is no store at %s", path),
			"check --db (or QUEUECTL_DB); 'queuectl send' creates a store with its first message, 'queuectl demo' one to explore")
	case err == nil && info.Mode().IsRegular() && info.Size() == 0 && !create:
		// bbolt would make it a store: a command that only reads or
		// changes messages leaves a file it did not expect as it is.
		return nil, domain.WithHint(domain.ErrUnavailable, fmt.Sprintf("%s is empty: it is not a queuectl store yet", path),
			"check --db (or QUEUECTL_DB); 'queuectl send' makes an empty file a store with its first message")
	}
	// bbolt tries the lock once and gives up when the timeout is shorter
	// than its retry interval.
	st, err := bolt.Open(path, bolt.Options{Timeout: time.Nanosecond, MakeDirs: makeDirs})
	switch {
	case err == nil:
		if fresh && created != nil {
			created(path)
		}
		return st, nil
	case locked(err):
		return nil, fmt.Errorf("%w: %w", errHeld, err)
	}
	return nil, StoreError(err)
}

// StoreError explains a failure to open a bbolt store for every command
// alike, serve included: a file that is not a queuectl store cannot be
// used, as one that is locked: exit 6 with what to do.
func StoreError(err error) error {
	if errors.Is(err, bolt.ErrNotStore) {
		return domain.WithHint(domain.ErrUnavailable, err.Error(),
			"point --db at the right file, or move this one aside to start a new store")
	}
	if errors.Is(err, bolt.ErrNoDir) {
		return domain.WithHint(domain.ErrUnavailable, err.Error()+"; nothing was created",
			"check --db (or QUEUECTL_DB): a new store's directory must exist, only the default store's is created")
	}
	return err
}

// locked tells bbolt's refusal of a file locked by another process from its
// other refusals of kind unavailable (a store of another layout version),
// which no wait would cure.
func locked(err error) bool {
	return errors.Is(err, bolt.ErrLocked)
}

// serve listens on the socket. The store is this process's (bbolt's lock),
// so a socket file left there is stale: a holder that was killed.
func (h *holding) serve(sock string, socket SocketServer) error {
	_ = os.Remove(sock)
	// Close removes the file itself, while it still holds the store: the
	// listener closing later (when Serve returns) must not remove the
	// socket of the next holder; Listen's never does.
	ln, err := socket.Listen(sock)
	if err != nil {
		_ = os.Remove(sock)
		return domain.Errorf(domain.ErrUnavailable, "serve the socket %s: %v", sock, err)
	}
	h.srv = &http.Server{Handler: socket.Handler(h.svc), ReadHeaderTimeout: 10 * time.Second}
	h.ln, h.sock = ln, sock
	go func() { _ = h.srv.Serve(ln) }()
	return nil
}

// Close stops serving the socket — the requests under way finish first —
// and lets the store go.
func (h *holding) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Shutdown closes the listener unless Serve has not started yet; then
	// closing it here is what stops new connections.
	var err error
	if h.srv != nil {
		_ = h.ln.Close()
		_ = os.Remove(h.sock)
		err = h.srv.Shutdown(ctx)
	}
	if cerr := h.st.Close(); err == nil {
		err = cerr
	}
	return err
}
