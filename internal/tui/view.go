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
	w, h := m.width, m.bodyHeight()
	body := m.body(w, h)
	if m.help {
		body = m.helpView(w, h)
	}
	if m.pending != nil {
		body = lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center,
			m.pending.dialog.View(w, m.style.Dialog))
	}
	body = fitLines(body, w, h)
	lines := []string{m.header(), m.tabs(), m.info(), body, m.statusLine(), m.hints()}
	return strings.Join(lines, "\n")
}

// header names what the TUI acts on and for whom, as k9s does: the store,
// or the server and the context that chose it, and the role. A target too
// long for the line loses its start, so that a file's name and the role stay.
func (m *Model) header() string {
	who := m.who()
	target := m.opts.Target
	if target == "" {
		return ansi.Truncate(who, m.width, "…")
	}
	room := m.width - ansi.StringWidth(who+" · ")
	if room < 12 {
		return ansi.Truncate(target+" · "+who, m.width, "…")
	}
	if tw := ansi.StringWidth(target); tw > room {
		target = "…" + ansi.TruncateLeft(target, tw-room+1, "")
	}
	return m.style.Title.Render(target) + " · " + who
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

// tabs is the tab bar: every view's number and name, the current one in
// brackets. A narrow terminal gets it without padding, then with only the
// numbers of the other views, so that every view keeps its tab.
func (m *Model) tabs() string {
	cur := m.topIndex()
	bar := func(padded, names bool) string {
		var parts []string
		for i, v := range topViews {
			label := fmt.Sprintf("%d %s", i+1, viewNames[v])
			switch {
			case i == cur && padded:
				parts = append(parts, m.style.ActiveTab.Render("["+label+"]"))
			case i == cur:
				parts = append(parts, m.style.ActiveTab.UnsetPadding().Render("["+label+"]"))
			case padded:
				parts = append(parts, m.style.Tab.Render(" "+label+" "))
			case names:
				parts = append(parts, label)
			default:
				parts = append(parts, fmt.Sprint(i+1))
			}
		}
		if padded {
			return strings.Join(parts, "")
		}
		return strings.Join(parts, " ")
	}
	for _, b := range []string{bar(true, true), bar(false, true), bar(false, false)} {
		if ansi.StringWidth(b) <= m.width {
			return b
		}
	}
	return ansi.Truncate(bar(false, false), m.width, "…")
}

// info says what the view holds: rows, page, filter, sort, marks, modes.
func (m *Model) info() string {
	var parts []string
	switch m.view {
	case viewMessages:
		parts = append(parts, "Messages of "+m.pages[viewMessages].queue)
	case viewDetail:
		parts = append(parts, "Message "+m.detail.id)
	case viewAuditEntry:
		parts = append(parts, fmt.Sprintf("Audit entry %d", m.entry.entry.Seq))
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
		return textBody(m.detail.lines(m.opts.Now()), &m.detail.offset, w, h)
	case viewAuditEntry:
		return textBody(m.entry.lines(), &m.entry.offset, w, h)
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
	case viewQueues, viewBlocked, viewBlacklist, viewMessages, viewAudit:
		return 2
	}
	return 0
}

// textBody is the window from offset on of a text view's lines (a
// message's or an audit entry's detail), each wrapped to width with its
// continuation indented under the text it continues; offset is kept within
// the text.
func textBody(text []string, offset *int, width, height int) string {
	var lines []string
	for _, l := range text {
		lines = append(lines, hang(l, width, continuationIndent(l))...)
	}
	*offset = min(*offset, max(len(lines)-height, 0))
	return strings.Join(lines[*offset:], "\n")
}

// continuationIndent is where the continuation of a wrapped line starts:
// under the value of a "key: value" line, and two columns further in than
// the line itself otherwise (an error text, a history entry).
func continuationIndent(line string) int {
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if i := strings.Index(line, ": "); lead == 0 && i > 0 {
		value := line[i+1:]
		return i + 1 + len(value) - len(strings.TrimLeft(value, " "))
	}
	return lead + 2
}

// hang wraps line to width columns at spaces — a message id, with its
// hyphens, stays whole on a line — and a word longer than a line where the
// line ends; the lines that continue it start indent columns in (at most
// half the width). Its text is plain: the views escape what others wrote.
func hang(line string, width, indent int) []string {
	width = max(width, 1)
	indent = min(indent, width/2)
	var out []string
	pad := ""
	for {
		room := width - len(pad)
		if ansi.StringWidth(line) <= room {
			return append(out, pad+line)
		}
		fit := ansi.Truncate(line, room, "")
		if fit == "" {
			return append(out, pad+line) // a character wider than the room
		}
		if line[len(fit)] != ' ' {
			// Back to the last space, unless that leaves only indentation.
			if i := strings.LastIndexByte(fit, ' '); i > 0 && strings.TrimLeft(fit[:i], " ") != "" {
				fit = fit[:i]
			}
		}
		out = append(out, pad+strings.TrimRight(fit, " "))
		line = strings.TrimLeft(line[len(fit):], " ")
		if line == "" {
			return out
		}
		pad = strings.Repeat(" ", indent)
	}
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
	wrapped := hang("▸ "+it.note, max(width-2, 10), 0)
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
	// An action's key shows where it applies and the role may run it.
	offer := func(b key.Binding, command string) {
		if !m.readOnly && m.identity.May(command) {
			list = append(list, b)
		}
	}
	switch m.view {
	case viewQueues, viewBlocked:
		offer(k.Resend, "message resend")
		offer(k.Fail, "message fail")
		offer(k.StopStart, "queue stop")
		if m.view == viewBlocked {
			offer(k.Edit, "message edit") // the head's payload
		}
	case viewBlacklist:
		offer(k.Release, "blacklist release")
		offer(k.Fail, "blacklist fail")
		offer(k.Edit, "message edit")
	case viewMessages, viewDetail:
		offer(k.Resend, "message resend")
		offer(k.Fail, "message fail")
		offer(k.Edit, "message edit")
	case viewTuning:
		offer(k.Edit, "tune set")
		offer(k.Unset, "tune unset")
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

// helpView lists every key, wrapped to width, from the help's scroll
// offset on.
func (m *Model) helpView(width, height int) string {
	lines := []string{m.style.Title.Render("Keys") + "   (j/k scroll · ?, q or esc closes)"}
	if m.readOnly {
		lines = append(lines, "  read-only: r f s e u are off")
	}
	for _, k := range m.keys.helpRows(m.readOnly) {
		lines = append(lines, hang(fmt.Sprintf("  %-14s %s", keyNames(k), k.Help().Desc), width, 17)...)
	}
	m.helpOffset = min(m.helpOffset, max(len(lines)-height, 0))
	return strings.Join(lines[m.helpOffset:], "\n")
}
