package send

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/queuectl/queuectl/internal/domain"
)

// The batches a spool hands out: at most sendBatch messages (one commit of
// the local service) and, unless one message is larger, batchPayload bytes
// of payload, so that memory stays bounded however long the input is and a
// remote batch stays well within the server's request limit.
const (
	sendBatch    = 1000
	batchPayload = 16 << 20
)

// Spool is the input of `send --jsonl`, every line checked and kept in an
// unlinked temporary file: §5 promises that an invalid line stores nothing,
// so every line is checked before the first is stored, yet a million lines
// must not be held in memory (§14). The file holds each line's number and
// its bytes; the lines are parsed a second time, a batch at a time, when
// they are sent.
type Spool struct {
	f *os.File
	// unlinked says the file has no name any more.
	unlinked bool
	n        int
}

// SpoolJSONL reads r line by line, checks each line against every rule of
// §2 with limit as the payload limit, and writes it to a spool. Blank lines
// are skipped but counted, so errors name the line as the user numbers it.
// A line longer than any valid message could be (an endless stream without
// a newline) is refused at that length, before it is buffered further.
func SpoolJSONL(ctx context.Context, r io.Reader, limit int64) (*Spool, error) {
	f, err := os.CreateTemp("", "queuectl-send-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("--jsonl: a temporary file for the checked lines: %w", err)
	}
	// Unlinked at once where the system allows it, so nothing is left
	// behind however the process ends; Close removes it elsewhere.
	s := &Spool{f: f, unlinked: os.Remove(f.Name()) == nil}
	if err := s.fill(ctx, r, limit); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Spool) fill(ctx context.Context, r io.Reader, limit int64) error {
	lines := newLineReader(r, maxLine(limit))
	w := bufio.NewWriterSize(s.f, 256<<10)
	var head [2 * binary.MaxVarintLen64]byte
	for {
		line, n, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("reading stdin: %w", ctx.Err())
			}
			return err
		}
		req, err := parseLine(line)
		if err == nil {
			err = req.Validate(limit)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w; nothing was stored", n, err)
		}
		k := binary.PutUvarint(head[:], uint64(n))
		k += binary.PutUvarint(head[k:], uint64(len(line)))
		w.Write(head[:k])
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("--jsonl: writing the checked lines to a temporary file: %w", err)
		}
		s.n++
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("--jsonl: writing the checked lines to a temporary file: %w", err)
	}
	return nil
}

// Len returns the number of messages in the spool.
func (s *Spool) Len() int { return s.n }

// Batches calls fn with the spooled messages in input order, in batches,
// with each message's line number.
func (s *Spool) Batches(fn func(reqs []domain.SendRequest, lines []int) error) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("--jsonl: reading back the checked lines: %w", err)
	}
	r := bufio.NewReaderSize(s.f, 256<<10)
	var reqs []domain.SendRequest
	var lines []int
	size := 0
	flush := func() error {
		if len(reqs) == 0 {
			return nil
		}
		err := fn(reqs, lines)
		reqs, lines, size = nil, nil, 0
		return err
	}
	var buf []byte
	for range s.n {
		n, err1 := binary.ReadUvarint(r)
		l, err2 := binary.ReadUvarint(r)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("--jsonl: reading back the checked lines: %w", err)
		}
		if uint64(cap(buf)) < l {
			buf = make([]byte, l)
		}
		buf = buf[:l]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("--jsonl: reading back the checked lines: %w", err)
		}
		req, err := parseLine(buf)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err) // checked before; the file changed under us
		}
		if len(reqs) == sendBatch || len(reqs) > 0 && size+len(req.Payload) > batchPayload {
			if err := flush(); err != nil {
				return err
			}
		}
		reqs, lines = append(reqs, *req), append(lines, int(n))
		size += len(req.Payload)
	}
	return flush()
}

// Close removes the spool.
func (s *Spool) Close() error {
	err := s.f.Close()
	if !s.unlinked {
		os.Remove(s.f.Name())
	}
	return err
}

// maxLine is the longest line a valid message can take: its payload as
// JSON text, where a control byte is written as a six-byte \u escape, plus
// room for the other fields (64 headers of 1 KiB, escaped).
func maxLine(limit int64) int64 {
	const room = 1 << 20
	if limit > (1<<62)/6 {
		return 1 << 62
	}
	return 6*limit + room
}
