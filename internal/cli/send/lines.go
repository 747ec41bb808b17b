package send

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/queuectl/queuectl/internal/domain"
)

// lineReader hands out the non-blank lines of an input, each at most max
// bytes: a longer line is refused as soon as it passes the bound, so an
// endless line is never buffered whole.
type lineReader struct {
	r    *bufio.Reader
	max  int64
	n    int // the number of the line last read
	line []byte
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next non-blank line, trimmed, and its number (from 1);
// io.EOF after the last.
func (l *lineReader) next() ([]byte, int, error) {
	for {
		l.n++
		l.line = l.line[:0]
		for {
			chunk, err := l.r.ReadSlice('\n')
			// max counts the line's content; its end (CR LF) is not part of it.
			if int64(len(l.line)+len(chunk)) > l.max+2 {
				return nil, l.n, domain.Invalidf("line %d is longer than %s, more than any message within engine.max_payload takes; nothing was stored",
					l.n, domain.FormatBytes(l.max))
			}
			l.line = append(l.line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, l.n, fmt.Errorf("reading stdin: %w", err)
			}
			if err != nil && len(l.line) == 0 {
				return nil, l.n, io.EOF
			}
			break
		}
		if line := bytes.TrimSpace(l.line); len(line) > 0 {
			return line, l.n, nil
		}
	}
}
