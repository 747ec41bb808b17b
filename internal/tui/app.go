// Package tui is queuectl's terminal UI (§12): a root model that routes to
// one page model per view, over the same admin.Service the CLI uses, so it
// works alike embedded and against a server.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// Options configure the TUI.
type Options struct {
	Service admin.Service
	// Refresh is the live refresh interval; 0 refreshes only on demand.
	Refresh time.Duration
	// ReadOnly hides and refuses the actions.
	ReadOnly bool
	// Node names what the TUI talks to, for the Nodes view when no node
	// serves the store.
	Node string
	// Target names what the TUI acts on, for the header: the store, or the
	// server and the context that chose it.
	Target string
	// Identity is who the TUI acts for (the service's WhoAmI): the actions
	// it offers are those the role may run. Run asks the service; nil is
	// the owner of the store, who may do everything.
	Identity *admin.Identity
	// NoColor turns colour off (--no-color, NO_COLOR).
	NoColor bool
	// Out is the terminal the styles are made for (default stdout).
	Out io.Writer
	// Now is the clock the ages are computed with.
	Now func() time.Time
	// Timeout bounds each request to the service (default DefaultTimeout).
	Timeout time.Duration
	// Editor, if set, makes the command that edits a payload file (e on a
	// message); by default $VISUAL or $EDITOR on the terminal.
	Editor func(file string) *exec.Cmd
}

// DefaultTimeout bounds each request when Options do not.
const DefaultTimeout = 10 * time.Second

// Model is the root model: it holds the pages, routes keys and results to
// the page on screen, and draws the frame around it.
type Model struct {
	opts  Options
	keys  KeyMap
	style Styles

	pages  map[viewID]*listPage
	detail *detailPage
	// entry is the audit entry enter opened.
	entry *auditEntryPage
	view  viewID
	// back is where esc returns to from a drill-in.
	back []viewID

	width, height int
	// sized is set once the terminal's size is known.
	sized      bool
	help       bool
	helpOffset int
	paused     bool
	readOnly   bool
	// identity is who the TUI acts for.
	identity *admin.Identity
	// payloadDenied is set when the role may not read payloads, or once
	// the service refused one: the detail view asks for none, so that a
	// refresh does not make the server refuse (and audit) it anew.
	payloadDenied bool
	filtering     bool
	filterInput   textinput.Model
	pending       *pendingAction
	// preparing is set while the queues of an action's targets are looked
	// up for its dialog.
	preparing bool
	status    components.StatusLine
	// loadErr says the status line shows a failed refresh, which the next
	// good refresh clears; an action's outcome stays until the next one.
	loadErr bool

	// loading is set while a refresh runs; gen tells a stale answer from
	// the current one.
	loading bool
	gen     int
	// lastLoad is when the view was last loaded without error.
	lastLoad time.Time
}

// New returns the root model.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = func() time.Time { return time.Now().UTC() }
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Identity == nil {
		opts.Identity = admin.OwnerIdentity("local")
	}
	fi := textinput.New()
	fi.Prompt = "/"
	m := &Model{
		opts: opts, keys: DefaultKeyMap(), style: NewStyles(opts.Out, opts.NoColor),
		identity: opts.Identity, readOnly: opts.ReadOnly || !mayAct(opts.Identity),
		payloadDenied: !opts.Identity.May("message payload"), width: 80, height: 24, filterInput: fi,
		pages: map[viewID]*listPage{
			viewQueues:    newListPage(viewQueues, queueSource{now: opts.Now}),
			viewBlocked:   newListPage(viewBlocked, queueSource{blocked: true, now: opts.Now}),
			viewBlacklist: newListPage(viewBlacklist, blacklistSource{now: opts.Now}),
			viewTuning:    newListPage(viewTuning, tuningSource{}),
			viewNodes:     newListPage(viewNodes, nodesSource{now: opts.Now}),
			viewAudit:     newListPage(viewAudit, auditSource{}),
			viewMessages:  newListPage(viewMessages, queueMessageSource{now: opts.Now}),
		},
	}
	if m.readOnly && !opts.ReadOnly {
		m.status = components.StatusLine{Text: "read-only: role " + opts.Identity.Role + " may not change anything"}
	}
	return m
}

// Run asks the service who the TUI acts for, unless opts say, and starts
// the TUI on the terminal; it returns when the operator quits. A server
// that cannot be reached, a token it refuses, or one that may not read
// queues ends it before it starts, with the error a command would give.
func Run(ctx context.Context, opts Options, progOpts ...tea.ProgramOption) error {
	if opts.Identity == nil {
		id, err := Identify(ctx, opts.Service, opts.Timeout)
		if err != nil {
			return err
		}
		opts.Identity = id
	}
	progOpts = append([]tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx)}, progOpts...)
	_, err := tea.NewProgram(New(opts), progOpts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// The messages the model gets from its commands.
type (
	tickMsg   struct{}
	loadedMsg struct {
		gen   int
		view  viewID
		items []item
		next  string
		err   error
	}
	actedMsg struct {
		// view is where the action was started: its marks go once it succeeded.
		view    viewID
		summary string
		err     error
	}
)

// Init starts the refresh clock.
func (m *Model) Init() tea.Cmd {
	// The first page is loaded once the terminal's size is known: a page
	// is as many rows as fit.
	return m.tick()
}

func (m *Model) tick() tea.Cmd {
	if m.opts.Refresh <= 0 {
		return nil
	}
	return tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return tickMsg{} })
}

// rowsPerPage is how many rows the list area holds: the body less the
// table's header and the note under the table.
func (m *Model) rowsPerPage() int { return max(m.bodyHeight()-1-m.noteLines(), 1) }

// bodyHeight is the terminal less the header, tab, info, status and hint lines.
func (m *Model) bodyHeight() int { return max(m.height-5, 1) }

// load refreshes the view on screen: one page of rows, off the UI loop.
func (m *Model) load() tea.Cmd {
	m.gen++
	gen, svc, timeout := m.gen, m.opts.Service, m.opts.Timeout
	switch m.view {
	case viewAuditEntry:
		return nil // the entry came with its row, and never changes
	case viewDetail:
		id, withPayload := m.detail.id, !m.payloadDenied
		m.loading = true
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return fetchDetail(ctx, svc, id, withPayload, gen)
		}
	}
	p := m.pages[m.view]
	q, view := p.query(m.rowsPerPage()), m.view
	m.loading = true
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		items, next, err := p.src.fetch(ctx, svc, q)
		return loadedMsg{gen: gen, view: view, items: items, next: next, err: err}
	}
}

// Update routes a message to the dialog, the filter, or the view on screen.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		resized := msg.Height != m.height || !m.sized
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		if resized && m.pending == nil {
			return m, m.load()
		}
		return m, nil
	case tickMsg:
		var cmd tea.Cmd
		if !m.paused && m.pending == nil && !m.loading && !m.filtering {
			cmd = m.load()
		}
		return m, tea.Batch(cmd, m.tick())
	case loadedMsg:
		if msg.gen != m.gen || msg.view != m.view {
			return m, nil
		}
		m.loading = false
		if msg.err != nil {
			m.setError(msg.err)
			m.loadErr = true
			return m, nil
		}
		m.pages[msg.view].setItems(msg.items, msg.next)
		m.lastLoad = m.opts.Now()
		m.clearLoadError()
		return m, nil
	case detailLoadedMsg:
		if msg.gen != m.gen || m.view != viewDetail {
			return m, nil
		}
		m.loading = false
		if msg.err != nil {
			m.setError(msg.err)
			m.loadErr = true
			return m, nil
		}
		m.detail.msg, m.detail.payload, m.detail.payloadErr = msg.msg, msg.payload, msg.payloadErr
		if errors.Is(msg.payloadErr, domain.ErrPermission) {
			m.payloadDenied = true
		}
		m.lastLoad = m.opts.Now()
		m.clearLoadError()
		return m, nil
	case actedMsg:
		m.pending = nil
		if msg.err != nil {
			m.setError(msg.err)
		} else {
			m.status, m.loadErr = components.StatusLine{Text: msg.summary}, false
			// The marks did their work: the next action starts afresh
			// instead of acting again on rows it has changed.
			if p, ok := m.pages[msg.view]; ok {
				clear(p.marks)
			}
		}
		return m, m.load()
	case dialogMsg:
		m.preparing = false
		if m.pending == nil && msg.pending != nil {
			m.pending = msg.pending
		}
		return m, nil
	case editReadyMsg:
		m.preparing = false
		if msg.err != nil {
			m.setError(msg.err)
			return m, nil
		}
		return m, m.openEditor(msg.s)
	case editedMsg:
		m.edited(msg)
		return m, nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	}
	return m, nil
}

func (m *Model) setError(err error) {
	m.loadErr = false
	if errors.Is(err, domain.ErrPermission) && !m.readOnly {
		m.readOnly = true
		m.status = components.StatusLine{Text: "now read-only: " + err.Error(), Error: true}
		return
	}
	m.status = components.StatusLine{Text: err.Error(), Error: true}
}

func (m *Model) clearLoadError() {
	if m.loadErr {
		m.status, m.loadErr = components.StatusLine{}, false
	}
}

// confirm runs the dialog's action off the UI loop.
func (m *Model) confirm() tea.Cmd {
	p := m.pending
	if p.tune != nil {
		// Checked here, by the rule the service applies, so that the
		// dialog stays open to correct it.
		if err := p.confirmTune(); err != nil {
			m.status = components.StatusLine{Text: err.Error(), Error: true}
			return nil
		}
	}
	if p.reason {
		// Checked here, so that the dialog stays open to correct it.
		if err := domain.ValidateReason(p.dialog.Input.Value()); err != nil {
			m.status = components.StatusLine{Text: "reason: " + err.Error(), Error: true}
			return nil
		}
	}
	p.dialog.Busy = true
	svc, timeout, view := m.opts.Service, m.opts.Timeout, m.view
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		s, err := p.run(ctx, svc)
		return actedMsg{view: view, summary: s, err: err}
	}
}

// switchTo shows a top view, loading it afresh.
func (m *Model) switchTo(v viewID) tea.Cmd {
	if m.view == v {
		return nil
	}
	m.view, m.back = v, nil
	return m.load()
}

// drill opens the Messages of a queue or the detail of a message.
func (m *Model) drill() tea.Cmd {
	p, ok := m.pages[m.view]
	if !ok {
		return nil
	}
	it, ok := p.current()
	if !ok {
		return nil
	}
	switch {
	case it.queue != nil:
		mp := m.pages[viewMessages]
		if mp.queue != it.queue.Name {
			*mp = *newListPage(viewMessages, mp.src)
			mp.queue = it.queue.Name
		}
	case it.msg != nil:
		if m.detail == nil || m.detail.id != it.msg.ID {
			m.detail = &detailPage{id: it.msg.ID}
		}
	case it.audit != nil:
		m.entry = &auditEntryPage{entry: it.audit}
	default:
		return nil
	}
	m.back = append(m.back, m.view)
	switch {
	case it.queue != nil:
		m.view = viewMessages
	case it.audit != nil:
		m.view = viewAuditEntry
	default:
		m.view = viewDetail
	}
	return m.load()
}

func (m *Model) goBack() tea.Cmd {
	if len(m.back) == 0 {
		return nil
	}
	m.view = m.back[len(m.back)-1]
	m.back = m.back[:len(m.back)-1]
	return m.load()
}

// Now is the clock the model renders ages with.
func (m *Model) Now() time.Time { return m.opts.Now() }

// String names the view on screen, for tests and logs.
func (m *Model) String() string { return fmt.Sprintf("tui(%s)", viewNames[m.view]) }
