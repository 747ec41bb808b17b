package cmdutil

import (
	"context"
	"io"
)

// ContextReader returns a reader of r whose Read ends as soon as ctx does,
// with ctx's error. A read of a terminal, a pipe or a FIFO blocks in the
// kernel and notices neither a signal that the process catches nor a
// --timeout; without this, Ctrl-C would not stop a command waiting for
// input until the input ends.
//
// Each Read runs in a goroutine of its own. When ctx ends first, that
// goroutine stays blocked until r yields; what it reads then is dropped, and
// every later Read returns ctx's error at once.
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	return &contextReader{ctx: ctx, r: r}
}

type contextReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	// done, while a read is in flight, delivers its result.
	done chan readResult
}

type readResult struct {
	n   int
	err error
}

func (c *contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.done == nil {
		// The goroutine reads into a buffer of its own: p belongs to the
		// caller, who may reuse it once Read has returned ctx's error.
		if cap(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		buf, done := c.buf[:len(p)], make(chan readResult, 1)
		c.done = done
		go func() {
			n, err := c.r.Read(buf)
			done <- readResult{n, err}
		}()
	}
	select {
	case res := <-c.done:
		c.done = nil
		return copy(p, c.buf[:res.n]), res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
