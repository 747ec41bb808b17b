package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the TUI answers to; the help view lists them all.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top key.Binding
	NextView, PrevView, Views       key.Binding
	Enter, Back                     key.Binding
	Filter, Sort, Reverse           key.Binding
	Mark, MarkAll                   key.Binding
	Resend, Fail, StopStart, Edit   key.Binding
	Unset                           key.Binding
	// Release is r in the Blacklist view, for its key line.
	Release         key.Binding
	Refresh, Pause  key.Binding
	Help, Quit      key.Binding
	Confirm, Cancel key.Binding
}

// DefaultKeyMap returns the keys of §12.
func DefaultKeyMap() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	return KeyMap{
		Up:        b("move up", "up", "k"),
		Down:      b("move down", "down", "j"),
		PageUp:    b("previous page of rows", "pgup", "b"),
		PageDown:  b("next page of rows", "pgdown", "n"),
		Top:       b("first page", "home", "g"),
		NextView:  b("next view", "tab"),
		PrevView:  b("previous view", "shift+tab"),
		Views:     b("Queues, Blocked, Blacklist, Tuning, Nodes, Audit", "1", "2", "3", "4", "5", "6"),
		Enter:     b("drill in: a queue's messages, a message's detail, an audit entry", "enter"),
		Back:      b("go back; clear the filter", "esc"),
		Filter:    b("filter the list (queue names: the store filters; other lists: the rows shown)", "/"),
		Sort:      b("sort the rows shown by the next column", "o"),
		Reverse:   b("reverse the sort", "O"),
		Mark:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark or unmark the row, then move down (as in htop and mc)")),
		MarkAll:   b("mark all rows shown (again: unmark all)", "ctrl+a"),
		Resend:    b("resend (Blacklist: release) the selection", "r"),
		Release:   b("release the selection (crashes reset)", "r"),
		Fail:      b("fail the selection", "f"),
		StopStart: b("stop or start the selected queues", "s"),
		Edit:      b("edit the selected message's payload in $EDITOR (Tuning: the selected value)", "e"),
		Unset:     b("unset the selected tuning value", "u"),
		Refresh:   b("refresh now", "ctrl+r"),
		Pause:     b("pause or resume live refresh", "p"),
		Help:      b("show or hide this help", "?"),
		Quit:      b("quit", "q", "ctrl+c"),
		Confirm:   b("confirm the dialog", "y"),
		Cancel:    b("cancel the dialog", "n", "esc"),
	}
}

// helpRows lists the keys for the help view, in reading order; actions are
// left out in read-only mode.
func (k KeyMap) helpRows(readOnly bool) []key.Binding {
	rows := []key.Binding{k.Up, k.Down, k.PageDown, k.PageUp, k.Top, k.NextView, k.PrevView, k.Views, k.Enter, k.Back,
		k.Filter, k.Sort, k.Reverse, k.Mark, k.MarkAll}
	if !readOnly {
		rows = append(rows, k.Resend, k.Fail, k.StopStart, k.Edit, k.Unset, k.Confirm, k.Cancel)
	}
	return append(rows, k.Refresh, k.Pause, k.Help, k.Quit)
}
