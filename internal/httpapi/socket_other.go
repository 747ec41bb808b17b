//go:build !unix

package httpapi

import (
	"net"
	"os"
)

// listenSocket listens at path and then restricts it: this system offers
// no bind without listen here, so the socket has the default mode for a
// moment.
func listenSocket(path string) (*net.UnixListener, error) {
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		os.Remove(path)
		return nil, err
	}
	return l, nil
}
