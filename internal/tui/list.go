package tui

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// viewID names a view of §12.
type viewID int

const (
	viewQueues viewID = iota
	viewBlocked
	viewBlacklist
	viewTuning
	viewNodes
	viewAudit
	viewMessages
	viewDetail
	viewAuditEntry
)

// topViews are the views tab and the number keys reach, in order.
var topViews = []viewID{viewQueues, viewBlocked, viewBlacklist, viewTuning, viewNodes, viewAudit}

var viewNames = map[viewID]string{
	viewQueues: "Queues", viewBlocked: "Blocked", viewBlacklist: "Blacklist", viewTuning: "Tuning",
	viewNodes: "Nodes", viewAudit: "Audit", viewMessages: "Messages", viewDetail: "Message",
	viewAuditEntry: "Audit entry",
}

// item is one row of a list view together with the object it shows.
type item struct {
	key   string
	cells []string
	// note is what the line under the table says of the row under the
	// cursor: its error in full, which the table's cell may cut.
	note  string
	queue *domain.Queue
	msg   *domain.Message
	tune  *admin.TuningEntry
	audit *domain.AuditEntry
}

// pageQuery is what one refresh asks the service for: one page of rows.
type pageQuery struct {
	after  string
	limit  int
	filter string
	queue  string
}

// source is where a list view's rows come from.
type source interface {
	columns() []components.Column
	// fetch returns up to q.limit rows after q.after, and the cursor of the
	// next page ("" when there is none).
	fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error)
	// storeFilter reports whether the service applies the filter (else the
	// view filters the rows it holds).
	storeFilter() bool
}

// listPage is the state of one list view: only the window of rows on screen.
type listPage struct {
	id    viewID
	src   source
	items []item
	// cursorKey is the row under the cursor: the cursor follows it, by its
	// key, through refreshes, re-sorting and actions. cursor is where it is.
	cursorKey string
	cursor    int
	// lost says the row under the cursor left the view (a blocked queue that
	// an action unblocked): nothing is selected until the operator moves,
	// so that a second key press cannot act on the row that took its place.
	lost     bool
	marks    map[string]item
	filter   string
	sortCol  int
	sortDesc bool
	// starts are the cursors of the pages before this one; after is this
	// page's, next the following page's.
	starts []string
	after  string
	next   string
	loaded bool
	// queue is the queue a Messages view shows.
	queue string
}

func newListPage(id viewID, src source) *listPage {
	return &listPage{id: id, src: src, marks: map[string]item{}, sortCol: -1}
}

// visible returns the rows shown: filtered (when the store did not) and sorted.
func (p *listPage) visible() []item {
	out := p.items
	if p.filter != "" && !p.src.storeFilter() {
		f := strings.ToLower(p.filter)
		out = nil
		for _, it := range p.items {
			if strings.Contains(strings.ToLower(strings.Join(it.cells, " ")), f) {
				out = append(out, it)
			}
		}
	}
	if p.sortCol >= 0 {
		out = slices.Clone(out)
		slices.SortStableFunc(out, func(a, b item) int {
			c := compareCells(cell(a, p.sortCol), cell(b, p.sortCol))
			if p.sortDesc {
				return -c
			}
			return c
		})
	}
	return out
}

func cell(it item, i int) string {
	if i < len(it.cells) {
		return it.cells[i]
	}
	return ""
}

// compareCells orders numbers as numbers and the rest as text.
func compareCells(a, b string) int {
	na, oka := number(a)
	nb, okb := number(b)
	if oka && okb {
		return cmp.Compare(na, nb)
	}
	return strings.Compare(a, b)
}

func number(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int64(r-'0')
	}
	return n, true
}

// setItems replaces the window after a refresh, keeping the cursor on the
// same row, wherever it moved, and refreshing the marked rows' objects. A
// row under the cursor that is gone leaves the cursor where it was, on no row.
func (p *listPage) setItems(items []item, next string) {
	first := !p.loaded
	p.items, p.next, p.loaded = items, next, true
	if first && p.id == viewMessages {
		// A queue opens on its head: the first message not yet final.
		for _, it := range items {
			if it.msg != nil && !it.msg.Status.Final() {
				p.cursorKey = it.key
				break
			}
		}
	}
	for _, it := range items {
		if _, ok := p.marks[it.key]; ok {
			p.marks[it.key] = it
		}
	}
	vis := p.visible()
	if p.cursorKey != "" && !p.lost {
		for i, it := range vis {
			if it.key == p.cursorKey {
				p.cursor = i
				return
			}
		}
		p.lost = true
	}
	p.cursor = min(p.cursor, max(len(vis)-1, 0))
	if !p.lost {
		p.syncCursor()
	}
}

// move puts the cursor on the row delta rows away, or — after its row left
// the view — on the row now in its place (down) or the one before (up).
func (p *listPage) move(delta int) {
	vis := p.visible()
	switch {
	case p.lost && delta > 0:
		p.lost = false
	case p.lost:
		p.lost = false
		p.cursor--
	default:
		p.cursor += delta
	}
	p.cursor = max(min(p.cursor, len(vis)-1), 0)
	p.syncCursor()
}

func (p *listPage) syncCursor() {
	vis := p.visible()
	if p.cursor >= 0 && p.cursor < len(vis) {
		p.cursorKey, p.lost = vis[p.cursor].key, false
	} else {
		p.cursorKey = ""
	}
}

// current returns the row under the cursor; none after it left the view.
func (p *listPage) current() (item, bool) {
	vis := p.visible()
	if p.lost || p.cursor < 0 || p.cursor >= len(vis) {
		return item{}, false
	}
	return vis[p.cursor], true
}

// selection is the marked rows, or else the row under the cursor.
func (p *listPage) selection() []item {
	if len(p.marks) > 0 {
		out := make([]item, 0, len(p.marks))
		for _, it := range p.marks {
			out = append(out, it)
		}
		slices.SortFunc(out, func(a, b item) int { return strings.Compare(a.key, b.key) })
		return out
	}
	if it, ok := p.current(); ok {
		return []item{it}
	}
	return nil
}

func (p *listPage) toggleMark() {
	it, ok := p.current()
	if !ok {
		return
	}
	if _, marked := p.marks[it.key]; marked {
		delete(p.marks, it.key)
	} else {
		p.marks[it.key] = it
	}
}

// markAll marks every row shown, or unmarks them all when all are marked.
func (p *listPage) markAll() {
	vis := p.visible()
	all := len(vis) > 0
	for _, it := range vis {
		_, ok := p.marks[it.key]
		all = all && ok
	}
	for _, it := range vis {
		if all {
			delete(p.marks, it.key)
		} else {
			p.marks[it.key] = it
		}
	}
}

func (p *listPage) table() components.Table {
	vis := p.visible()
	t := components.Table{Columns: p.src.columns(), Cursor: p.cursor, SortCol: p.sortCol, SortDesc: p.sortDesc}
	if p.lost {
		t.Cursor = -1
	}
	for _, it := range vis {
		t.Rows = append(t.Rows, it.cells)
		_, m := p.marks[it.key]
		t.Marked = append(t.Marked, m)
	}
	return t
}

// query is the refresh of the page on screen.
func (p *listPage) query(limit int) pageQuery {
	return pageQuery{after: p.after, limit: limit, filter: p.filter, queue: p.queue}
}

// pageNumber is 1 for the first page.
func (p *listPage) pageNumber() int { return len(p.starts) + 1 }

func (p *listPage) nextPage() bool {
	if p.next == "" {
		return false
	}
	p.starts = append(p.starts, p.after)
	p.after, p.cursor, p.cursorKey, p.lost = p.next, 0, "", false
	return true
}

func (p *listPage) prevPage() bool {
	if len(p.starts) == 0 {
		return false
	}
	p.after = p.starts[len(p.starts)-1]
	p.starts = p.starts[:len(p.starts)-1]
	p.cursor, p.cursorKey, p.lost = 1<<30, "", false
	return true
}

func (p *listPage) firstPage() {
	p.starts, p.after, p.cursor, p.cursorKey, p.lost = nil, "", 0, "", false
}

func col(title string, width int) components.Column {
	return components.Column{Title: title, Width: width}
}

// optional is a column a narrow terminal leaves out; higher drop goes first.
func optional(title string, width, drop int) components.Column {
	return components.Column{Title: title, Width: width, Drop: drop}
}
