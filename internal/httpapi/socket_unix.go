//go:build unix

package httpapi

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// bindSocket binds a unix stream socket at path, without listening.
func bindSocket(path string) (*os.File, error) {
	syscall.ForkLock.RLock() // no child may inherit the descriptor before it is close-on-exec
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "bind", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func listenSocket(path string) (*net.UnixListener, error) { return listenBound(path) }

// listenOn starts accepting connections on a bound socket.
func listenOn(f *os.File) error {
	return os.NewSyscallError("listen", syscall.Listen(int(f.Fd()), syscall.SOMAXCONN))
}

// listenBound binds, restricts and then listens, on systems with the calls
// to do it in that order.
func listenBound(path string) (*net.UnixListener, error) {
	f, err := bindSocket(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		os.Remove(path)
		return nil, err
	}
	if err := listenOn(f); err != nil {
		os.Remove(path)
		return nil, err
	}
	l, err := net.FileListener(f)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		os.Remove(path)
		return nil, fmt.Errorf("listen on %s: not a unix socket", path)
	}
	return ul, nil
}
