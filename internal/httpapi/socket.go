package httpapi

import "net"

// ListenSocket listens on a unix socket at path that no one but its owner
// can connect to at any moment (§6): the socket is bound, made 0600, and
// only then listens. Bound and listening at once, as net.Listen does, it
// would accept connections with the umask's mode (world-writable under
// umask 000) until a chmod — and a connection made then stays. A socket
// that is bound but not listening refuses every connection. The listener
// does not remove path when it closes: whoever serves it does, while it
// still may.
func ListenSocket(path string) (*net.UnixListener, error) {
	return listenSocket(path)
}
