package components

import (
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"
)

// Dialog asks the operator to confirm one action. Lines say exactly what
// will change; Input, when set, takes a value first (a tuning value).
type Dialog struct {
	Title string
	Lines []string
	Input *textinput.Model
	// Keys, when set, replaces the [y/N] of a dialog without input: the
	// answers it takes.
	Keys string
	// Busy is set while the confirmed action runs.
	Busy bool
}

// View renders the dialog in a box at most width wide.
func (d Dialog) View(width int, box lipgloss.Style) string {
	var b strings.Builder
	b.WriteString(d.Title)
	for _, l := range d.Lines {
		b.WriteString("\n" + l)
	}
	if d.Input != nil {
		b.WriteString("\n" + d.Input.View())
	}
	switch {
	case d.Busy:
		b.WriteString("\nworking…")
	case d.Input != nil:
		b.WriteString("\nenter: confirm · esc: cancel")
	case d.Keys != "":
		b.WriteString("\n" + d.Keys)
	default:
		b.WriteString("\n[y/N]")
	}
	text := b.String()
	w := lipgloss.Width(text) + box.GetHorizontalPadding()
	return box.Width(max(min(width-box.GetHorizontalBorderSize(), w, 100), 20)).Render(text)
}
