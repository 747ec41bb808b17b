// Package components holds the TUI's building blocks: the table of a list
// view, the confirmation dialog and the status line.
package components

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/queuectl/queuectl/internal/output"
)

// Column is one column of a table. Width is the most it takes: less when
// its title and the values on screen are narrower; the last column takes
// what is left of the terminal's width. On a narrow terminal the columns
// with the highest Drop are left out first (0: never).
type Column struct {
	Title string
	Width int
	Drop  int
	// Min, for the last column, is the room it keeps before droppable
	// columns go (lastMin when 0): less for a text that the line under the
	// table shows whole.
	Min int
}

// TableStyles are the looks a table needs.
type TableStyles struct {
	Header, Cursor, Marked lipgloss.Style
}

// Table renders the rows it is given — a window of the list, never more —
// with the cursor row marked > and marked rows *.
type Table struct {
	Columns []Column
	Rows    [][]string
	Cursor  int
	Marked  []bool
	// SortCol is the column the rows are sorted by (-1: store order).
	SortCol  int
	SortDesc bool
}

// View renders the table in width columns and height lines (header
// included); rows past the height are not drawn.
func (t Table) View(width, height int, st TableStyles) string {
	widths := t.fit(width - 2)
	keep := func(v []string) []string {
		out := make([]string, 0, len(widths))
		for i, w := range widths {
			if w > 0 && i < len(v) {
				out = append(out, v[i])
			} else if w > 0 {
				out = append(out, "")
			}
		}
		return out
	}
	shown := make([]int, 0, len(widths))
	for _, w := range widths {
		if w > 0 {
			shown = append(shown, w)
		}
	}
	var b strings.Builder
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		title := c.Title
		if i == t.SortCol {
			title += map[bool]string{false: "▲", true: "▼"}[t.SortDesc]
		}
		head[i] = title
	}
	b.WriteString(st.Header.Render(cells("  ", keep(head), shown)))
	for i, r := range t.Rows {
		if i+1 >= height {
			break
		}
		b.WriteByte('\n')
		prefix := "  "
		marked := i < len(t.Marked) && t.Marked[i]
		switch {
		case i == t.Cursor && marked:
			prefix = ">*"
		case i == t.Cursor:
			prefix = "> "
		case marked:
			prefix = " *"
		}
		line := cells(prefix, keep(r), shown)
		switch {
		case i == t.Cursor:
			line = st.Cursor.Render(line)
		case marked:
			line = st.Marked.Render(line)
		}
		b.WriteString(line)
	}
	return b.String()
}

// gap is the space between two columns.
const gap = 2

// lastMin is the room the last column (an error text, as a rule, which the
// line under the table shows in full) keeps unless it says otherwise
// (Column.Min): droppable columns go before it gets less.
const lastMin = 16

// fit gives each column the width its title and values need, up to its
// Width; leaves out the droppable columns, highest Drop first, while the
// last column would get less than lastMin; and gives the last column what
// is left. On a terminal too narrow even so, columns shrink from the right.
// A width of 0 leaves the column out.
func (t Table) fit(width int) []int {
	n := len(t.Columns)
	if n == 0 {
		return nil
	}
	w := make([]int, n)
	for i, c := range t.Columns {
		content := 0
		for _, r := range t.Rows {
			if i < len(r) {
				content = max(content, ansi.StringWidth(r[i]))
			}
		}
		title := ansi.StringWidth(c.Title)
		if i == t.SortCol {
			title++ // the arrow
		}
		w[i] = max(title, min(c.Width, content))
	}
	last := n - 1
	before := func() int { // the width of every column but the last, with gaps
		u := 0
		for _, x := range w[:last] {
			if x > 0 {
				u += x + gap
			}
		}
		return u
	}
	keep := lastMin
	if m := t.Columns[last].Min; m > 0 {
		keep = m
	}
	for before()+min(w[last], keep) > width {
		drop := -1
		for i, c := range t.Columns {
			if w[i] > 0 && c.Drop > 0 && (drop < 0 || c.Drop > t.Columns[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		w[drop] = 0
	}
	w[last] = max(width-before(), 4)
	used := before() + w[last]
	for i := last - 1; i >= 0 && used > width; i-- {
		cut := min(used-width, w[i]-min(w[i], 4))
		w[i] -= cut
		used -= cut
	}
	return w
}

func cells(prefix string, values []string, widths []int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i, w := range widths {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		v = ansi.Truncate(output.Escape(v), w, "…")
		b.WriteString(v)
		if i < len(widths)-1 {
			b.WriteString(strings.Repeat(" ", w-ansi.StringWidth(v)+gap))
		}
	}
	return strings.TrimRight(b.String(), " ")
}
