// Package embedded is the admin service of embedded mode (§6): the bbolt
// store of this machine, held only while a call reads or writes it — never
// while a command waits for stdin, a terminal, a confirmation or a full
// output pipe, because lists are read a page at a time and each page is
// handed out after the store is let go.
//
// Whoever holds the store serves its socket, <db>.sock, for as long as it
// holds it. A call that finds the store held goes through that socket; while
// neither works — the store is held by a process that serves no socket, or a
// holder is just starting or stopping — the call waits, up to Options.Wait
// or the context's deadline, and then reports the store as in use (exit 6).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/domain"
)

// DefaultWait is how long a call waits for a store held by a process that
// serves no socket (another short command) when its context has no deadline.
const DefaultWait = 5 * time.Second

// Options configure the service.
type Options struct {
	// Path is the bbolt file; its socket is Path + ".sock".
	Path string
	// Local configures the service on the store while this process holds it.
	Local local.Options
	// Create lets a call create the store when it does not exist; without
	// it a missing store is refused (exit 6) and nothing is made.
	Create bool
	// MakeDirs lets the store's missing directories be created with it
	// (the default store's); without it a new store's directory must exist.
	MakeDirs bool
	// Created, if set, is told the path of a store a call created.
	Created func(path string)
	// Wait bounds the wait for a held store without a socket; zero means
	// DefaultWait. A deadline of the call's context bounds it instead.
	Wait time.Duration
	// Socket serves the socket while this process holds the store. It is
	// the HTTP API, which sits above this package and is wired in by the
	// caller; nil serves no socket, and other processes then wait for the
	// store as for a short command's.
	Socket SocketServer
	// waiting, if set, is told each time a call found the store held and
	// no socket answering, before it waits: tests wait on it.
	waiting func()
}

// SocketServer serves the API of a store's service on the store's socket.
type SocketServer interface {
	// Listen listens on the unix socket at path, which only its owner may
	// connect to; closing the listener leaves the file.
	Listen(path string) (net.Listener, error)
	// Handler is the API over svc, for everyone the socket admits.
	Handler(svc *local.Service) http.Handler
}

// Service is the admin service of embedded mode. It is safe for concurrent
// use: calls of one process share one hold of the store.
type Service struct {
	opts Options
	sock string

	// mu guards the hold; it is held while the store is opened or closed,
	// so that calls of this process never contend for the file lock.
	mu    sync.Mutex
	held  *holding
	users int
}

var _ admin.Service = (*Service)(nil)

// New returns the service; it opens nothing until a call needs the store.
func New(opts Options) *Service {
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	return &Service{opts: opts, sock: opts.Path + ".sock"}
}

// Close releases nothing: the store is held only during calls.
func (s *Service) Close() error { return nil }

// do runs fn on the store, held by this process for the call, or else on
// the socket of the process that holds it. fn must leave no effect behind
// when it fails for want of an answer from the socket, as a page read or a
// single request does: it may then run again.
func (s *Service) do(ctx context.Context, fn func(admin.Service) error) error {
	deadline := time.Now().Add(s.opts.Wait)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	delay := time.Millisecond
	for {
		svc, err := s.hold()
		if err == nil {
			err = fn(svc)
			s.release()
			return err
		}
		if !errors.Is(err, errHeld) {
			return err
		}
		// Held by another process: it serves the socket while it holds it.
		if ctx.Err() != nil {
			return s.waited(ctx)
		}
		c, err := s.socket()
		if err != nil {
			return err
		}
		err = fn(c)
		_ = c.Close()
		if errors.Is(err, context.DeadlineExceeded) && !s.served() {
			return s.inUse() // the time ran out waiting, not in a request
		}
		if !errors.Is(err, remote.ErrNoAnswer) {
			return err
		}
		// No answer: the holder serves no socket, or is starting or stopping.
		if !time.Now().Before(deadline) {
			return s.inUse()
		}
		if s.opts.waiting != nil {
			s.opts.waiting()
		}
		t := time.NewTimer(min(delay, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return s.waited(ctx)
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// socket returns a client on the holder's socket, naming this operator. A
// connection is not kept between requests: the next may find another holder.
func (s *Service) socket() (*remote.Client, error) {
	sock := s.sock
	abs, err := filepath.Abs(sock)
	if err != nil {
		return nil, err
	}
	return remote.New(remote.Options{
		Server: "unix://" + abs,
		Actor:  s.opts.Local.Actor,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
		},
	})
}

// waited is the error of a call whose context ended while it waited for the
// store: at its deadline, the store is in use.
func (s *Service) waited(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return s.inUse()
	}
	return ctx.Err()
}

// served reports whether a socket file is there to answer.
func (s *Service) served() bool {
	_, err := os.Stat(s.sock)
	return err == nil
}

// inUse is the error of a store held longer than a call waits.
func (s *Service) inUse() error {
	return domain.WithHint(domain.ErrUnavailable,
		fmt.Sprintf("the store %s is in use by another process", s.opts.Path),
		fmt.Sprintf("it has held the store for longer than this command waits, and serves no socket (%s): "+
			"an older queuectl, or another program; find it with 'fuser %s'", s.sock, s.opts.Path))
}
