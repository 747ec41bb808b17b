package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Column is one column of a table: its header, whether it shows only in
// -o wide, and how a row's cell is made. Max, when set, is the longest value
// the column can hold (an id is 36 characters); it sizes the column of a
// table too long to measure before printing.
type Column[T any] struct {
	Header string
	Wide   bool
	Max    int
	// Clip, when set, marks a free-text column (an error, a detail): a
	// table shows at most Clip characters of it, with an ellipsis, and -o
	// wide the whole text. (A wide table too long to measure before it
	// prints sizes the column by its first rows, at least Max.)
	Clip  int
	Value func(T) string
}

// List streams values of T in one format. Add each value, then Close.
type List[T any] struct {
	w      *bufio.Writer
	format Format
	id     func(T) string
	n      int
	table  *tableWriter[T]
	// enc encodes every value of -o json into item, and of -o jsonl
	// straight to w: one encoder reuses its buffers from value to value.
	enc  *json.Encoder
	item bytes.Buffer
}

// NewList starts a list on w. id gives the value printed by -o ids (a message
// id or a queue name); cols give the table columns.
func NewList[T any](w io.Writer, f Format, cols []Column[T], id func(T) string) *List[T] {
	l := &List[T]{w: bufio.NewWriter(w), format: f, id: id}
	switch {
	case f.Tabular():
		l.table = newTableWriter(l.w, selectColumns(cols, f == Wide), f == Wide)
	case f == JSONL:
		l.enc = json.NewEncoder(l.w)
	case f == JSON:
		// Each value indented as an element of the array, as
		// json.MarshalIndent(v, "  ", "  ") would.
		l.enc = json.NewEncoder(&l.item)
		l.enc.SetIndent("  ", "  ")
	}
	return l
}

// Add prints (or, for a table, queues for printing) one value.
func (l *List[T]) Add(v T) error {
	l.n++
	switch l.format {
	case Table, Wide:
		return l.table.add(v)
	case IDs:
		_, err := fmt.Fprintln(l.w, l.id(v))
		return err
	case JSONL:
		return l.enc.Encode(v)
	case JSON:
		l.item.Reset()
		if err := l.enc.Encode(v); err != nil {
			return err
		}
		sep := ",\n  "
		if l.n == 1 {
			sep = "[\n  "
		}
		l.w.WriteString(sep)
		_, err := l.w.Write(bytes.TrimSuffix(l.item.Bytes(), []byte("\n")))
		return err
	case YAML:
		// A one-element sequence per value: concatenated they form one sequence.
		b, err := yaml.Marshal([]T{v})
		if err != nil {
			return err
		}
		_, err = l.w.Write(b)
		return err
	}
	return fmt.Errorf("unknown output format %q", l.format)
}

// Count returns how many values were added.
func (l *List[T]) Count() int { return l.n }

// Flush writes out what is buffered, so a slow stream shows its rows as they
// come. Tables keep their first rows until they are measured.
func (l *List[T]) Flush() error { return l.w.Flush() }

// Close ends the list (closing the JSON array, printing the table) and flushes.
func (l *List[T]) Close() error {
	switch l.format {
	case Table, Wide:
		if err := l.table.close(); err != nil {
			return err
		}
	case JSON:
		if l.n == 0 {
			l.w.WriteString("[]\n")
		} else {
			l.w.WriteString("\n]\n")
		}
	case YAML:
		if l.n == 0 {
			l.w.WriteString("[]\n")
		}
	}
	return l.w.Flush()
}

func selectColumns[T any](cols []Column[T], wide bool) []Column[T] {
	var out []Column[T]
	for _, c := range cols {
		if !c.Wide || wide {
			out = append(out, c)
		}
	}
	return out
}
