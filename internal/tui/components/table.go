// Package components holds the TUI's building blocks: the table of a list
// view, the confirmation dialog and the status line.
package components

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/queuectl/queuectl/internal/output"
)

// Column is one column of a table. Width is what it wants; the last column
// takes what is left of the terminal's width. On a narrow terminal the
// columns with the highest Drop are left out first (0: never).
type Column struct {
	Title string
	Width int
	Drop  int
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

// fit gives each column its wanted width, leaving out the droppable
// columns while they do not fit, then shrinking from the right; the last
// column takes the rest. A width of 0 leaves the column out.
func (t Table) fit(width int) []int {
	w := make([]int, len(t.Columns))
	used := 0
	for i, c := range t.Columns {
		w[i] = max(c.Width, ansi.StringWidth(c.Title)+2)
		used += w[i] + 1
	}
	const lastMin = 12
	for used+lastMin > width {
		drop := -1
		for i, c := range t.Columns {
			if w[i] > 0 && c.Drop > 0 && (drop < 0 || c.Drop > t.Columns[drop].Drop) {
				drop = i
			}
		}
		if drop < 0 {
			break
		}
		used -= w[drop] + 1
		w[drop] = 0
	}
	for i := len(w) - 1; i >= 0 && used > width; i-- {
		cut := min(used-width, w[i]-min(w[i], 4))
		w[i] -= cut
		used -= cut
	}
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			if used < width {
				w[i] += width - used
			}
			break
		}
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
			b.WriteString(strings.Repeat(" ", w-ansi.StringWidth(v)+1))
		}
	}
	return strings.TrimRight(b.String(), " ")
}
