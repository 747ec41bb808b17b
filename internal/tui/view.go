package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/queuectl/queuectl/internal/tui/components"
)

// View draws the frame: tabs, the view's info line, the view (or the help,
// or a dialog over it), the status line and the key hints.
func (m *Model) View() string {
	w, h := m.width, m.height
	body := m.body(w, h-4)
	if m.help {
		body = m.helpView(h - 4)
	}
	if m.pending != nil {
		body = lipgloss.Place(w, h-4, lipgloss.Center, lipgloss.Center,
			m.pending.dialog.View(w, m.style.Dialog))
	}
	body = fitLines(body, w, h-4)
	lines := []string{m.tabs(), m.info(), body, m.statusLine(), m.hints()}
	return strings.Join(lines, "\n")
}

// fitLines cuts or pads s to exactly height lines of at most width columns,
// so the frame never scrolls and the footer stays at the bottom.
func fitLines(s string, width, height int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > height {
		lines = lines[:max(height, 0)]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, width, "")
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) tabs() string {
	var parts []string
	cur := m.topIndex()
	for i, v := range topViews {
		label := fmt.Sprintf("%d %s", i+1, viewNames[v])
		if i == cur {
			parts = append(parts, m.style.ActiveTab.Render("["+label+"]"))
		} else {
			parts = append(parts, m.style.Tab.Render(" "+label+" "))
		}
	}
	return ansi.Truncate(strings.Join(parts, ""), m.width, "…")
}

// info says what the view holds: rows, page, filter, sort, marks, modes.
func (m *Model) info() string {
	var parts []string
	switch m.view {
	case viewMessages:
		parts = append(parts, "Messages of "+m.pages[viewMessages].queue)
	case viewDetail:
		parts = append(parts, "Message "+m.detail.id)
	}
	if p, ok := m.pages[m.view]; ok && p.loaded {
		vis := p.visible()
		parts = append(parts, fmt.Sprintf("page %d · %s", p.pageNumber(), count(len(vis), "row")))
		if p.next != "" {
			parts[0] += " · more: n"
		}
		if p.filter != "" {
			parts = append(parts, "filter: "+p.filter)
		}
		if p.sortCol >= 0 {
			dir := "up"
			if p.sortDesc {
				dir = "down"
			}
			parts = append(parts, fmt.Sprintf("sort: %s %s", p.src.columns()[p.sortCol].Title, dir))
		}
		if len(p.marks) > 0 {
			parts = append(parts, fmt.Sprintf("%d marked", len(p.marks)))
		}
	}
	if m.readOnly {
		parts = append(parts, "READ-ONLY")
	}
	if m.filtering {
		return m.filterInput.View()
	}
	return ansi.Truncate(strings.Join(parts, " · "), m.width, "…")
}

func (m *Model) body(w, h int) string {
	switch m.view {
	case viewDetail:
		// Long errors and history reasons wrap rather than run off the edge.
		lines := strings.Split(ansi.Wrap(strings.Join(m.detail.lines(m.opts.Now()), "\n"), w, " "), "\n")
		off := min(m.detail.offset, max(len(lines)-h, 0))
		m.detail.offset = off
		return strings.Join(lines[off:], "\n")
	}
	p := m.pages[m.view]
	if !p.loaded {
		return "loading…"
	}
	t := p.table()
	if len(t.Rows) == 0 {
		// Wrapped, so that a long text is read whole on a narrow terminal.
		lines := strings.Split(ansi.Wrap(m.emptyText(), max(w-2, 10), " "), "\n")
		return t.View(w, h, m.tableStyles()) + "\n  " + strings.Join(lines, "\n  ")
	}
	notes := m.noteLines()
	if notes == 0 {
		return t.View(w, h, m.tableStyles())
	}
	return fitLines(t.View(w, h-notes, m.tableStyles()), w, h-notes) + "\n" + m.note(p, w, notes)
}

// noteLines is how many lines under the table of the view on screen tell
// of the row under the cursor: its error in full.
func (m *Model) noteLines() int {
	switch m.view {
	case viewQueues, viewBlocked, viewBlacklist, viewMessages:
		return 2
	}
	return 0
}

// note is the row under the cursor's note, wrapped to lines lines of width
// columns, the last one cut.
func (m *Model) note(p *listPage, width, lines int) string {
	it, ok := p.current()
	if !ok || it.note == "" {
		if p.lost {
			return "  " + m.style.Hint.Render("the row under the cursor left this view; j/k move on")
		}
		return ""
	}
	wrapped := strings.Split(ansi.Wrap("▸ "+it.note, max(width-2, 10), " "), "\n")
	if len(wrapped) > lines {
		wrapped = wrapped[:lines]
		wrapped[lines-1] = ansi.Truncate(wrapped[lines-1]+" …", max(width-2, 10), "…")
	}
	for i := range wrapped {
		wrapped[i] = "  " + wrapped[i]
	}
	return strings.Join(wrapped, "\n")
}

func (m *Model) emptyText() string {
	switch m.view {
	case viewBlocked:
		return "no queue is blocked"
	case viewBlacklist:
		return "no message is blacklisted"
	case viewNodes:
		return "no node is serving the store (queuectl serve runs one); this TUI talks to " + m.opts.Node
	}
	if p := m.pages[m.view]; p.filter != "" {
		return "nothing matches the filter; esc clears it"
	}
	return "nothing here"
}

func (m *Model) tableStyles() components.TableStyles {
	return components.TableStyles{Header: m.style.Header, Cursor: m.style.Cursor, Marked: m.style.Marked}
}

func (m *Model) statusLine() string {
	s := m.status
	switch {
	case m.opts.Refresh <= 0:
		s.Right = "refresh: ctrl+r"
	case m.paused:
		s.Right = "refresh paused (p)"
	case m.pending != nil:
		s.Right = "refresh paused: dialog open"
	default:
		s.Right = "refresh every " + m.opts.Refresh.String()
	}
	if m.loading {
		s.Right = "loading… " + s.Right
	} else if !m.lastLoad.IsZero() {
		s.Right = "at " + m.lastLoad.Format("15:04:05") + " · " + s.Right
	}
	return s.View(m.width, m.style.Status, m.style.Error)
}

// hints is the key line: every key it has room for, never cut in a word.
// The actions stay longest, then how to get about; the help (?), which
// lists every key, always.
func (m *Model) hints() string {
	k := m.keys
	list := []key.Binding{k.Help, k.Filter, k.Mark}
	if !m.readOnly {
		switch m.view {
		case viewQueues, viewBlocked:
			list = append(list, k.Resend, k.Fail, k.StopStart)
		case viewBlacklist:
			list = append(list, k.Release, k.Fail)
		case viewMessages, viewDetail:
			list = append(list, k.Resend, k.Fail)
		case viewTuning:
			list = append(list, k.Edit)
		}
	}
	list = append(list, k.Enter, k.Back, k.Quit)
	// Left out first when the line is too long: mark, filter, back, enter, quit.
	for _, drop := range []key.Binding{k.Mark, k.Filter, k.Back, k.Enter, k.Quit} {
		if ansi.StringWidth(hintLine(list)) <= m.width {
			break
		}
		list = slices.DeleteFunc(list, func(b key.Binding) bool { return b.Help() == drop.Help() })
	}
	return m.style.Hint.Render(ansi.Truncate(hintLine(list), m.width, "…"))
}

func hintLine(list []key.Binding) string {
	parts := make([]string, 0, len(list))
	for _, b := range list {
		parts = append(parts, b.Help().Key+" "+shortHelp(b))
	}
	return strings.Join(parts, " · ")
}

// shortHelp is a binding's name in the hint line.
func shortHelp(b key.Binding) string {
	words := strings.Fields(b.Help().Desc)
	if len(words) == 0 {
		return ""
	}
	switch words[0] {
	case "show":
		return "help"
	case "drill":
		return "open"
	case "go":
		return "back"
	case "stop":
		return "stop/start"
	case "filter":
		return "filter"
	}
	return strings.TrimSuffix(words[0], ",")
}

// keyNames lists a binding's keys as the help shows them.
func keyNames(b key.Binding) string {
	names := make([]string, 0, len(b.Keys()))
	for _, k := range b.Keys() {
		if k == " " {
			k = "space"
		}
		names = append(names, k)
	}
	return strings.Join(names, " ")
}

// helpView lists every key, from the help's scroll offset on.
func (m *Model) helpView(height int) string {
	title := m.style.Title.Render("Keys") + "   (j/k scroll · ? or esc closes)"
	if m.readOnly {
		title += "   read-only: r f s e are off"
	}
	lines := []string{title}
	for _, k := range m.keys.helpRows(m.readOnly) {
		lines = append(lines, fmt.Sprintf("  %-14s %s", keyNames(k), k.Help().Desc))
	}
	m.helpOffset = min(m.helpOffset, max(len(lines)-height, 0))
	return strings.Join(lines[m.helpOffset:], "\n")
}
