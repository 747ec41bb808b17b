package output

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tablewriter memoizes cell widths in an LRU cache; for the short ASCII
// cells of queuectl's tables, maintaining the cache costs more than
// measuring the cells again (`queue list` of 1,000 queues: 2.4× faster
// without it).
func init() { twwidth.SetCacheCapacity(0) }

// measureRows is how many rows a table holds back to size its columns. A
// longer list is then streamed with those widths (widened to each column's
// Max), so memory stays bounded.
const measureRows = 1000

// tableWriter prints rows as a borderless table in the style of kubectl.
type tableWriter[T any] struct {
	w        io.Writer
	cols     []Column[T]
	held     [][]string
	streamer *tablewriter.Table
	// widths are the content widths of a streamed table's columns.
	widths []int
	// wide shows free-text columns whole (Column.Clip).
	wide bool
}

func newTableWriter[T any](w io.Writer, cols []Column[T], wide bool) *tableWriter[T] {
	return &tableWriter[T]{w: &trimWriter{w: w}, cols: cols, wide: wide}
}

func (t *tableWriter[T]) add(v T) error {
	row := make([]string, len(t.cols))
	for i, c := range t.cols {
		row[i] = Escape(c.Value(v))
		if c.Clip > 0 && !t.wide {
			row[i] = Truncate(row[i], c.Clip)
		}
	}
	if t.streamer != nil {
		return t.streamer.Append(t.clip(row))
	}
	t.held = append(t.held, row)
	if len(t.held) < measureRows {
		return nil
	}
	return t.startStream()
}

func (t *tableWriter[T]) headers() []string {
	h := make([]string, len(t.cols))
	for i, c := range t.cols {
		h[i] = c.Header
	}
	return h
}

// startStream switches from holding rows to streaming them with fixed widths.
func (t *tableWriter[T]) startStream() error {
	widths := tw.NewMapper[int, int]()
	t.widths = make([]int, len(t.cols))
	for i, c := range t.cols {
		w := max(utf8.RuneCountInString(c.Header), c.Max)
		for _, r := range t.held {
			w = max(w, utf8.RuneCountInString(r[i]))
		}
		t.widths[i] = w
		widths.Set(i, w+len(cellGap))
	}
	t.streamer = tablewriter.NewTable(t.w, append(tableOptions(),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}),
		tablewriter.WithColumnWidths(widths))...)
	if err := t.streamer.Start(); err != nil {
		return err
	}
	t.streamer.Header(t.headers())
	for _, r := range t.held {
		if err := t.streamer.Append(r); err != nil {
			return err
		}
	}
	t.held = nil
	return nil
}

// clip shortens the cells of a streamed row that are wider than their
// column, with an ellipsis: the table would otherwise cut them silently.
func (t *tableWriter[T]) clip(row []string) []string {
	for i, cell := range row {
		row[i] = Truncate(cell, t.widths[i])
	}
	return row
}

func (t *tableWriter[T]) close() error {
	if t.streamer != nil {
		return t.streamer.Close()
	}
	if len(t.held) == 0 {
		return nil // an empty list prints nothing; the command says so on stderr
	}
	tb := tablewriter.NewTable(t.w, tableOptions()...)
	tb.Header(t.headers())
	if err := tb.Bulk(t.held); err != nil {
		return err
	}
	return tb.Render()
}

const cellGap = "  "

func tableOptions() []tablewriter.Option {
	return []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: cellGap, Overwrite: true}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
}

// trimWriter drops the padding that the last column leaves at the end of each
// line, so that table output compares cleanly and pastes well.
type trimWriter struct {
	w       io.Writer
	pending []byte // trailing spaces not yet known to be followed by text
}

func (t *trimWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, " \n")
		if i < 0 {
			if err := t.flushPending(); err != nil {
				return 0, err
			}
			_, err := t.w.Write(p)
			return n, err
		}
		if i > 0 {
			if err := t.flushPending(); err != nil {
				return 0, err
			}
			if _, err := t.w.Write(p[:i]); err != nil {
				return 0, err
			}
		}
		if p[i] == ' ' {
			t.pending = append(t.pending, ' ')
		} else {
			t.pending = t.pending[:0]
			if _, err := t.w.Write([]byte{'\n'}); err != nil {
				return 0, err
			}
		}
		p = p[i+1:]
	}
	return n, nil
}

func (t *trimWriter) flushPending() error {
	if len(t.pending) == 0 {
		return nil
	}
	_, err := t.w.Write(t.pending)
	t.pending = t.pending[:0]
	return err
}
