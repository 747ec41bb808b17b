package send

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

// readPayload reads the payload from --file or stdin, at most limit bytes
// (§2): the limit is enforced while reading, so a producer that streams
// endless bytes is cut off at it, never buffered. The read ends with ctx
// (a signal, --timeout), even while it waits on a terminal or a pipe.
func (opts *Options) readPayload(ctx context.Context, limit int64) ([]byte, error) {
	var in io.Reader = opts.IO.In
	if opts.File != "" {
		f, err := os.Open(opts.File)
		if err != nil {
			return nil, domain.Invalidf("--file: %v", unwrapPathError(err))
		}
		defer f.Close()
		// A regular file's size is known: one too big is refused unread,
		// with its size.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if err := domain.ValidatePayload(st.Size(), limit); err != nil {
				return nil, err
			}
		}
		in = f
	} else if opts.IO.StdinTTY {
		opts.Hintf("reading the payload from stdin; end it with Ctrl-D (or use --file)")
	}
	b, err := io.ReadAll(io.LimitReader(cmdutil.ContextReader(ctx, in), limit+1))
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("reading the payload: %w", ctx.Err())
	case err != nil && opts.File != "":
		return nil, domain.Invalidf("--file: %v", unwrapPathError(err))
	case err != nil:
		return nil, fmt.Errorf("reading the payload from stdin: %w", err)
	case int64(len(b)) > limit:
		return nil, domain.Errorf(domain.ErrTooLarge, "payload is over %s, the limit (engine.max_payload)", domain.FormatBytes(limit))
	}
	return b, nil
}
