package admin

import "context"

// Caller is who asks the service to act: the name the history and audit log
// record, and where the request came from.
type Caller struct {
	Actor  string
	Source string
	// Role is the role the caller's token grants; empty on a server's
	// unix socket, which may do everything.
	Role string
}

type callerKey struct{}

// WithCaller returns a context that names the caller of the requests made
// with it; the HTTP API sets it from the bearer token.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller a context names, if any.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
