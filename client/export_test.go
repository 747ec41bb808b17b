package client

import (
	"context"
	"time"
)

// WithSleep replaces the wait between attempts, so that tests see the
// waits and need not wait.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}
