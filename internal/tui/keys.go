package tui

import (
	"os"
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/queuectl/queuectl/internal/tui/components"
)

// handleKey routes a key to the dialog, the filter line, the help, or the view.
func (m *Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if msg.String() == "ctrl+c" {
		return m, tea.Quit
	}
	// Keys typed faster than the terminal is read arrive in one message
	// ("jj"): outside a text input each of them counts, one after the
	// other. A paste is text, not keys.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.typing() {
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			_, cmd := m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			cmds = append(cmds, cmd)
		}
		return m, tea.Batch(cmds...)
	}
	switch {
	case m.pending != nil:
		return m, m.dialogKey(msg)
	case m.filtering:
		return m, m.filterKey(msg)
	case m.help:
		switch {
		case key.Matches(msg, k.Help, k.Back, k.Quit):
			// q too: quitting is one q away once the help is closed.
			m.help = false
		case key.Matches(msg, k.Down):
			m.helpOffset++
		case key.Matches(msg, k.Up):
			m.helpOffset = max(m.helpOffset-1, 0)
		}
		return m, nil
	}
	p := m.pages[m.view]
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.help = true
	case key.Matches(msg, k.NextView, k.PrevView):
		step := 1
		if key.Matches(msg, k.PrevView) {
			step = len(topViews) - 1
		}
		return m, m.switchTo(topViews[(m.topIndex()+step)%len(topViews)])
	case key.Matches(msg, k.Views):
		return m, m.switchTo(topViews[msg.Runes[0]-'1'])
	case key.Matches(msg, k.Refresh):
		return m, m.load()
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
	case key.Matches(msg, k.Enter):
		return m, m.drill()
	case key.Matches(msg, k.Back):
		if p != nil && p.filter != "" {
			p.filter = ""
			p.firstPage()
			return m, m.load()
		}
		return m, m.goBack()
	case m.view == viewDetail:
		return m, m.detailKey(msg)
	case m.view == viewAuditEntry:
		m.scroll(msg, &m.entry.offset)
	case p == nil:
	case key.Matches(msg, k.Up):
		if p.cursor == 0 && !p.lost && p.prevPage() {
			return m, m.load()
		}
		p.move(-1)
	case key.Matches(msg, k.Down):
		if p.cursor >= len(p.visible())-1 && !p.lost && p.nextPage() {
			return m, m.load()
		}
		p.move(1)
	case key.Matches(msg, k.PageDown):
		if p.nextPage() {
			return m, m.load()
		}
	case key.Matches(msg, k.PageUp):
		if p.prevPage() {
			p.cursor = 0
			return m, m.load()
		}
	case key.Matches(msg, k.Top):
		p.firstPage()
		return m, m.load()
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.filterInput.SetValue(p.filter)
		m.filterInput.CursorEnd()
		return m, m.filterInput.Focus()
	case key.Matches(msg, k.Sort):
		p.sortCol++
		if p.sortCol >= len(p.src.columns()) {
			p.sortCol = -1
		}
		p.syncCursorTo()
	case key.Matches(msg, k.Reverse):
		p.sortDesc = !p.sortDesc
		p.syncCursorTo()
	case key.Matches(msg, k.Mark):
		if _, ok := p.current(); ok {
			p.toggleMark()
			p.move(1)
		}
	case key.Matches(msg, k.MarkAll):
		p.markAll()
	case key.Matches(msg, k.Resend, k.Fail, k.StopStart, k.Edit, k.Unset):
		return m, m.startAction(msg, p.selection())
	}
	return m, nil
}

// typing reports whether keys go to a text input: the filter line, or a
// dialog's value or reason.
func (m *Model) typing() bool {
	return m.filtering || (m.pending != nil && m.pending.dialog.Input != nil)
}

// syncCursorTo keeps the cursor on the same row after the order changed.
func (p *listPage) syncCursorTo() {
	if p.lost {
		return
	}
	for i, it := range p.visible() {
		if it.key == p.cursorKey {
			p.cursor = i
			return
		}
	}
}

func (m *Model) topIndex() int {
	v := m.view
	if len(m.back) > 0 {
		v = m.back[0]
	}
	for i, t := range topViews {
		if t == v {
			return i
		}
	}
	return 0
}

// detailKey scrolls the detail view and acts on its message.
func (m *Model) detailKey(msg tea.KeyMsg) tea.Cmd {
	k, d := m.keys, m.detail
	switch {
	case m.scroll(msg, &d.offset):
	case key.Matches(msg, k.Resend, k.Fail, k.Edit) && d.msg != nil:
		return m.startAction(msg, []item{{key: d.msg.ID, msg: d.msg}})
	}
	return nil
}

// scroll moves a text view's window by a line, a page, or to the top, and
// reports whether the key was one of those.
func (m *Model) scroll(msg tea.KeyMsg, offset *int) bool {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		*offset = max(*offset-1, 0)
	case key.Matches(msg, k.Down):
		*offset++
	case key.Matches(msg, k.PageDown):
		*offset += m.bodyHeight()
	case key.Matches(msg, k.PageUp):
		*offset = max(*offset-m.bodyHeight(), 0)
	case key.Matches(msg, k.Top):
		*offset = 0
	default:
		return false
	}
	return true
}

// startAction opens the confirmation dialog of r, f, s or e — for r and f
// once the queues of the targets are looked up — or says why the key does
// nothing here.
func (m *Model) startAction(msg tea.KeyMsg, sel []item) tea.Cmd {
	k := m.keys
	if m.readOnly {
		m.status = components.StatusLine{Text: "read-only: actions are off", Error: true}
		return nil
	}
	if m.preparing {
		return nil
	}
	if len(sel) == 0 {
		text := "nothing selected"
		if p := m.pages[m.view]; p != nil && p.lost {
			text = "nothing selected: the row under the cursor left this view; move with j/k"
		}
		m.status = components.StatusLine{Text: text, Error: true}
		return nil
	}
	var p *pendingAction
	why := "does not apply in this view"
	switch {
	case key.Matches(msg, k.Resend, k.Fail):
		v := verbResend
		if key.Matches(msg, k.Fail) {
			v = verbFail
		}
		if m.view == viewBlacklist {
			v = map[bool]verb{true: verbRelease, false: verbBLFail}[v == verbResend]
		}
		if m.view == viewTuning || m.view == viewNodes || m.view == viewAudit {
			break
		}
		if !m.mayRun(msg, v.action.Command()) {
			return nil
		}
		ts := targets(sel)
		if slices.ContainsFunc(ts, v.applies) {
			return m.prepareMessageAction(v, ts)
		}
		why = v.word + " applies to none of the selection (status or head)"
	case key.Matches(msg, k.StopStart):
		if m.view == viewQueues || m.view == viewBlocked {
			p = queueAction(sel)
		}
	case key.Matches(msg, k.Edit):
		if m.view != viewTuning {
			return m.startEdit(msg, sel)
		}
		if sel[0].tune != nil {
			p = tuneAction(sel[0].tune)
		}
	case key.Matches(msg, k.Unset):
		if e := sel[0].tune; m.view == viewTuning && e != nil {
			if !e.Set {
				why = e.Param + subLabel(e.Sub) + " is not set; nothing to unset"
				break
			}
			p = unsetAction(e)
		}
	}
	if p == nil {
		m.status = components.StatusLine{Text: msg.String() + ": " + why, Error: true}
		return nil
	}
	if !m.mayRun(msg, p.command) {
		return nil
	}
	m.pending = p
	return nil
}

// dialogKey answers the confirmation dialog.
func (m *Model) dialogKey(msg tea.KeyMsg) tea.Cmd {
	p := m.pending
	if p.dialog.Busy {
		return nil
	}
	if p.dialog.Input != nil {
		switch msg.Type {
		case tea.KeyEnter:
			return m.confirm()
		case tea.KeyEsc:
			m.cancelDialog()
			return nil
		}
		in, cmd := p.dialog.Input.Update(msg)
		p.dialog.Input = &in
		p.showTuneChange()
		return cmd
	}
	switch msg.String() {
	case "y", "Y":
		return m.confirm()
	case "r":
		if p.edit != nil && p.resendable {
			p.resend = true
			return m.confirm()
		}
	case "n", "N", "esc", "q", "enter":
		m.cancelDialog()
	}
	return nil
}

func (m *Model) cancelDialog() {
	if m.pending.edit != nil {
		os.Remove(m.pending.edit.file) // the operator dropped the edit
	}
	m.pending = nil
	m.status = components.StatusLine{Text: "cancelled; nothing changed"}
}

// filterKey edits the filter line; enter applies it, esc drops the edit.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	p := m.pages[m.view]
	switch msg.Type {
	case tea.KeyEnter:
		m.filtering = false
		m.filterInput.Blur()
		p.filter = m.filterInput.Value()
		p.firstPage()
		return m.load()
	case tea.KeyEsc:
		m.filtering = false
		m.filterInput.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.filterInput, cmd = m.filterInput.Update(msg)
	return cmd
}
