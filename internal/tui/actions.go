package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// pendingAction is an action a dialog asks to confirm.
type pendingAction struct {
	dialog components.Dialog
	// run performs the action and returns the status line's summary.
	run func(ctx context.Context, svc admin.Service) (string, error)
	// tune is the tuning value an edit dialog changes.
	tune *admin.TuningEntry
	// reason says that the dialog's input is the reason of a fail.
	reason bool
	// command is the queuectl command the action runs, which the role
	// must be allowed.
	command string
	// edit is the payload edit the dialog stores; resendable says r may
	// resend it too, and resend that it was asked to.
	edit               *editSession
	resendable, resend bool
}

// verb describes a message action: its words and the status it leads to.
type verb struct {
	action admin.Action
	word   string // "Fail"
	past   string // "failed"
	to     domain.Status
}

var (
	verbResend  = verb{admin.ActResend, "Resend", "resent", domain.StatusTBDL}
	verbFail    = verb{admin.ActFail, "Fail", "failed", domain.StatusFAIL}
	verbRelease = verb{admin.ActRelease, "Release", "released", domain.StatusTBDL}
	verbBLFail  = verb{admin.ActBlacklistFail, "Fail", "failed", domain.StatusFAIL}
)

// target is a message an action is about to change.
type target struct {
	id     string
	queue  string
	status domain.Status
	black  bool
}

// targets turns selected rows into the messages they stand for: a queue row
// stands for its head.
func targets(items []item) []target {
	var out []target
	for _, it := range items {
		switch {
		case it.msg != nil:
			out = append(out, target{id: it.msg.ID, queue: it.msg.Queue, status: it.msg.Status, black: it.msg.Blacklisted})
		case it.queue != nil && it.queue.Head != nil:
			h := it.queue.Head
			out = append(out, target{id: h.ID, queue: it.queue.Name, status: h.Status, black: h.Blacklisted})
		}
	}
	return out
}

// applies reports whether v can change a message in status st.
func (v verb) applies(t target) bool {
	if v.action == admin.ActRelease || v.action == admin.ActBlacklistFail {
		return t.black && t.status == domain.StatusNDLV
	}
	return domain.Allowed(t.status, v.to, domain.ByOperator)
}

// maxDialogQueues bounds how many queues a dialog looks up to say what
// moves on; a selection over more says so.
const maxDialogQueues = 50

// prepareMessageAction looks up the queues of the targets, off the UI
// loop, and opens the dialog: the same text whichever view it came from.
func (m *Model) prepareMessageAction(v verb, ts []target) tea.Cmd {
	svc, timeout := m.opts.Service, m.opts.Timeout
	m.preparing = true
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		queues := map[string]*domain.Queue{}
		for _, t := range ts {
			if _, ok := queues[t.queue]; ok || len(queues) == maxDialogQueues {
				continue
			}
			q, err := svc.Queue(ctx, t.queue)
			if err != nil {
				q = nil // the dialog then says nothing of what moves on there
			}
			queues[t.queue] = q
		}
		return dialogMsg{pending: messageAction(v, ts, queues)}
	}
}

// dialogMsg opens a prepared dialog.
type dialogMsg struct{ pending *pendingAction }

// messageAction builds the dialog of r or f over ts, given the queues they
// are in: what changes, from which status to which, in which queues, how
// many messages move on once the heads among them no longer hold their
// queues up, which queues stay blocked, and what is skipped.
func messageAction(v verb, ts []target, queues map[string]*domain.Queue) *pendingAction {
	var ids, skipped, order, black []string
	from := map[domain.Status]int{}
	perQueue := map[string]int{}
	for _, t := range ts {
		if !v.applies(t) {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", short(t.id), t.status))
			continue
		}
		ids = append(ids, t.id)
		if t.black {
			black = append(black, t.id)
		}
		from[t.status]++
		if perQueue[t.queue]++; perQueue[t.queue] == 1 {
			order = append(order, t.queue)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var froms []string
	for _, st := range domain.Statuses {
		if n := from[st]; n > 0 {
			if len(from) == 1 {
				froms = append(froms, string(st))
			} else {
				froms = append(froms, fmt.Sprintf("%d %s", n, st))
			}
		}
	}
	where := order[0]
	if len(order) > 1 {
		where = fmt.Sprintf("%d queues", len(order))
	}
	title := fmt.Sprintf("%s %s (%s) in %s: %s → %s?", v.word, count(len(ids), "message"), idList(ids), where,
		strings.Join(froms, ", "), v.to)
	lines := moveOnLines(ids, order, perQueue, queues)
	switch {
	case v.action == admin.ActRelease:
		lines = append(lines, "Crashes are reset to 0.")
	case v.action == admin.ActResend && len(black) > 0:
		// A resend leaves blacklisted messages alone unless asked: this
		// dialog asks, naming them.
		switch {
		case len(ids) == 1:
			lines = append(lines, "It is blacklisted: it crashed the engine. Resending releases it: crashes are reset to 0.")
		case len(black) == len(ids):
			lines = append(lines, "All are blacklisted: they crashed the engine. Resending releases them: crashes are reset to 0.")
		case len(black) == 1:
			lines = append(lines, fmt.Sprintf("1 of them is blacklisted (%s): it crashed the engine. Resending releases it: crashes are reset to 0.",
				idList(black)))
		default:
			lines = append(lines, fmt.Sprintf("%d of them are blacklisted (%s): they crashed the engine. Resending releases them: crashes are reset to 0.",
				len(black), idList(black)))
		}
	}
	if len(skipped) > 0 {
		lines = append(lines, fmt.Sprintf("Skipped, the action does not apply: %s.", strings.Join(skipped, ", ")))
	}
	p := &pendingAction{dialog: components.Dialog{Title: title, Lines: lines}}
	if v.to == domain.StatusFAIL {
		// A failed message is final: its history says why, as
		// `message fail --reason` does.
		in := textinput.New()
		in.Prompt = "reason (optional): "
		in.CharLimit = domain.MaxReason
		in.Focus()
		p.dialog.Input, p.reason = &in, true
	}
	p.run = func(ctx context.Context, svc admin.Service) (string, error) {
		reason := "queuectl tui"
		if p.reason && strings.TrimSpace(p.dialog.Input.Value()) != "" {
			reason = p.dialog.Input.Value()
		}
		res, err := svc.Act(ctx, admin.ActParams{Action: v.action, Targets: ids, Reason: reason,
			IncludeBlacklisted: len(black) > 0})
		if err != nil {
			return "", err
		}
		return bulkSummary(v.past, "message", res), nil
	}
	return p
}

// moveOnLines says what the action frees: in each queue whose head holds it
// up and is among the targets, the messages behind it that are not targets
// themselves move on; a queue whose head is not among them stays blocked.
func moveOnLines(ids, order []string, perQueue map[string]int, queues map[string]*domain.Queue) []string {
	var moveOn int64
	var freed, stays []string
	inOrder := true
	for _, name := range order {
		q := queues[name]
		if q == nil || q.Head == nil || q.Behind == nil || !domain.HoldsUp(q.QoS, q.Head.Status, q.Head.ErrorClass) {
			continue
		}
		if !slices.Contains(ids, q.Head.ID) {
			stays = append(stays, name)
			continue
		}
		// The targets behind the head change too: they do not move on.
		if n := *q.Behind - int64(perQueue[name]-1); n > 0 {
			moveOn += n
			freed = append(freed, name)
			inOrder = inOrder && q.QoS == domain.EOIO
		}
	}
	var lines []string
	if moveOn > 0 {
		how := ""
		if inOrder {
			how = ", in order"
		}
		if len(freed) == 1 {
			lines = append(lines, fmt.Sprintf("Then %s goes on: %s behind its head move%s on%s.", freed[0],
				count(int(moveOn), "message"), map[bool]string{true: "s", false: ""}[moveOn == 1], how))
		} else {
			lines = append(lines, fmt.Sprintf("Then %d queues go on: %s behind their heads move on%s.", len(freed),
				count(int(moveOn), "message"), how))
		}
	}
	switch len(stays) {
	case 0:
	case 1:
		lines = append(lines, fmt.Sprintf("%s stays blocked: its head is not among them.", stays[0]))
	default:
		lines = append(lines, fmt.Sprintf("%d queues stay blocked: their heads are not among them.", len(stays)))
	}
	if len(queues) == maxDialogQueues && len(order) > maxDialogQueues {
		lines = append(lines, fmt.Sprintf("(Looked at the first %d queues of %d.)", maxDialogQueues, len(order)))
	}
	return lines
}

// queueAction builds the dialog of s: stop the selected queues, or start
// them when all are stopped.
func queueAction(items []item) *pendingAction {
	var names []string
	allStopped := true
	for _, it := range items {
		if it.queue != nil {
			names = append(names, it.queue.Name)
			allStopped = allStopped && it.queue.Stopped
		}
	}
	if len(names) == 0 {
		return nil
	}
	action, word, past, what := admin.ActStop, "Stop", "stopped", "Delivery stops; they keep accepting messages."
	if allStopped {
		action, word, past, what = admin.ActStart, "Start", "started", "Delivery resumes."
	}
	list := strings.Join(names, ", ")
	if len(names) > 3 {
		list = strings.Join(names[:3], ", ") + ", …"
	}
	return &pendingAction{
		command: action.Command(),
		dialog: components.Dialog{Title: fmt.Sprintf("%s %s (%s)?", word, count(len(names), "queue"), list),
			Lines: []string{what}},
		run: func(ctx context.Context, svc admin.Service) (string, error) {
			res, err := svc.Act(ctx, admin.ActParams{Action: action, Targets: names})
			if err != nil {
				return "", err
			}
			return bulkSummary(past, "queue", res), nil
		},
	}
}

func bulkSummary(past, noun string, r *admin.BulkResult) string {
	s := fmt.Sprintf("%s %s", past, count(r.Changed, noun))
	if noun == "message" && r.Changed > 0 {
		s += " (" + idList(r.ChangedIDs) + ")"
	}
	if len(r.Skipped) > 0 {
		k := r.Skipped[0]
		s += fmt.Sprintf("; %d skipped (%s: %s %s)", len(r.Skipped), short(k.ID), k.Status, k.Reason)
	}
	if len(r.NotFound) > 0 {
		s += fmt.Sprintf("; %d not found", len(r.NotFound))
	}
	return s
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// short abbreviates a message id for dialogs: its first 8 characters, which
// a UUIDv7 shares with every id made in the same minute, and its last 4,
// which tell them apart.
func short(id string) string {
	if len(id) <= 13 {
		return id
	}
	return id[:8] + "…" + id[len(id)-4:]
}

func idList(ids []string) string {
	out := make([]string, 0, 3)
	for i, id := range ids {
		if i == 3 {
			out = append(out, "…")
			break
		}
		out = append(out, short(id))
	}
	return strings.Join(out, ", ")
}
