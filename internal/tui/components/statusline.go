package components

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/queuectl/queuectl/internal/output"
)

// StatusLine is the last outcome (an action's result or an error) and the
// refresh state, on one line.
type StatusLine struct {
	Text  string
	Error bool
	Right string
}

// View renders the line in width columns: the outcome on the left, the
// refresh state on the right.
func (s StatusLine) View(width int, ok, bad lipgloss.Style) string {
	left := output.Escape(s.Text)
	if s.Error && left != "" {
		left = "error: " + left
	}
	room := width - ansi.StringWidth(s.Right) - 1
	left = ansi.Truncate(left, max(room, 0), "…")
	gap := max(width-ansi.StringWidth(left)-ansi.StringWidth(s.Right), 1)
	style := ok
	if s.Error {
		style = bad
	}
	out := style.Render(left) + spaces(gap) + s.Right
	return ansi.Truncate(out, width, "")
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
