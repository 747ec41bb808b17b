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
	b, over, err := readAtMost(cmdutil.ContextReader(ctx, in), limit)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("reading the payload: %w", ctx.Err())
	case err != nil && opts.File != "":
		return nil, domain.Invalidf("--file: %v", unwrapPathError(err))
	case err != nil:
		return nil, fmt.Errorf("reading the payload from stdin: %w", err)
	case over:
		return nil, domain.Errorf(domain.ErrTooLarge, "payload is over %s, the limit (engine.max_payload)", domain.FormatBytes(limit))
	}
	return b, nil
}

// readChunk is how much readAtMost reads at a time.
const readChunk = 256 << 10

// readAtMost reads r to its end, or until it has read more than limit
// bytes (over). It reads in chunks and joins them once at the end, so that
// memory stays near the payload's size — and, for an input over the limit,
// near the limit — rather than the twice or more that a growing buffer and
// its garbage take.
func readAtMost(r io.Reader, limit int64) (b []byte, over bool, err error) {
	var chunks [][]byte
	var total int64
	for {
		chunk := make([]byte, min(readChunk, limit+1-total))
		n, err := io.ReadFull(r, chunk)
		chunks = append(chunks, chunk[:n])
		total += int64(n)
		if total > limit {
			return nil, true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], false, nil
	}
	b = make([]byte, 0, total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, false, nil
}
