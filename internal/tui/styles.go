package tui

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are the TUI's looks. Every state is also shown in text (the cursor
// as >, marks as *, errors with "error:"), so nothing is lost without colour.
type Styles struct {
	Tab, ActiveTab lipgloss.Style
	Header         lipgloss.Style
	Cursor, Marked lipgloss.Style
	Status, Error  lipgloss.Style
	Dialog         lipgloss.Style
	Hint, Title    lipgloss.Style
	Bad, Good      lipgloss.Style
}

// NewStyles returns the styles for a terminal writing to out; noColor (the
// --no-color flag or NO_COLOR) turns colour and attributes off.
func NewStyles(out io.Writer, noColor bool) Styles {
	r := lipgloss.NewRenderer(out)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	s := r.NewStyle
	return Styles{
		Tab:       s().Padding(0, 1),
		ActiveTab: s().Padding(0, 1).Bold(true).Reverse(true),
		Header:    s().Bold(true).Underline(true),
		Cursor:    s().Reverse(true),
		Marked:    s().Foreground(lipgloss.Color("6")),
		Status:    s().Foreground(lipgloss.Color("2")),
		Error:     s().Foreground(lipgloss.Color("1")).Bold(true),
		Dialog:    s().Border(lipgloss.NormalBorder()).Padding(0, 1),
		Hint:      s().Faint(true),
		Title:     s().Bold(true),
		Bad:       s().Foreground(lipgloss.Color("1")),
		Good:      s().Foreground(lipgloss.Color("2")),
	}
}
