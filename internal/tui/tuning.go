package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// tuningSource lists the tuning values of §7; there are few, so one page.
type tuningSource struct{}

func (tuningSource) storeFilter() bool { return false }

func (tuningSource) columns() []components.Column {
	return []components.Column{col("PARAM", 22), col("SUB", 12), col("VALUE", 5), optional("SET", 7, 2), col("QUEUES", 30)}
}

func (tuningSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	entries, err := svc.Tuning(ctx)
	if err != nil {
		return nil, "", err
	}
	items := make([]item, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		set := "default"
		if e.Set {
			set = "set"
		}
		queues := strconv.Itoa(len(e.Queues))
		if len(e.Queues) > 0 {
			queues += ": " + strings.Join(e.Queues, " ")
		}
		items = append(items, item{key: e.Param + "/" + e.Sub, tune: e,
			cells: []string{e.Param, dash(e.Sub), strconv.Itoa(e.Value), set, queues}})
	}
	return items, "", nil
}

// tuneAction builds the dialog of e: a new value for one tuning entry.
func tuneAction(e *admin.TuningEntry) *pendingAction {
	in := textinput.New()
	in.Prompt = fmt.Sprintf("new value (1–%d): ", admin.MaxParallel)
	in.CharLimit = len(strconv.Itoa(admin.MaxParallel))
	in.SetValue(strconv.Itoa(e.Value))
	in.CursorEnd()
	in.Focus()
	lines := []string{"", "Applies to messages enqueued after the change; existing queues drain as they are."}
	if e.Set {
		lines = append(lines, "(u in this view unsets it.)")
	}
	p := &pendingAction{
		tune: e, command: "tune set",
		dialog: components.Dialog{Title: fmt.Sprintf("Set %s%s (now %d)", e.Param, subLabel(e.Sub), e.Value),
			Lines: lines, Input: &in},
	}
	p.showTuneChange()
	return p
}

// showTuneChange states the change the typed value makes, or why the
// service would refuse it.
func (p *pendingAction) showTuneChange() {
	if p.tune == nil {
		return
	}
	e := p.tune
	v, err := admin.ParseTuningValue(e.Param, strings.TrimSpace(p.dialog.Input.Value()))
	if err != nil {
		p.dialog.Lines[0] = err.Error()
		return
	}
	p.dialog.Lines[0] = fmt.Sprintf("Change: %s%s %d → %d.", e.Param, subLabel(e.Sub), e.Value, v)
}

// confirmTune checks the typed value and makes it the action.
func (p *pendingAction) confirmTune() error {
	typed := strings.TrimSpace(p.dialog.Input.Value())
	e := p.tune
	if _, err := admin.ParseTuningValue(e.Param, typed); err != nil {
		return err
	}
	tp := admin.TuneParams{Param: e.Param, Sub: e.Sub, Value: typed}
	p.run = func(ctx context.Context, svc admin.Service) (string, error) {
		got, err := svc.Tune(ctx, tp)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s%s: %d → %d", e.Param, subLabel(e.Sub), e.Value, got.Value), nil
	}
	return nil
}

// unsetAction builds the dialog of u: remove a tuning value, as tune unset
// does, saying which value applies then.
func unsetAction(e *admin.TuningEntry) *pendingAction {
	then := "the default, 1, applies"
	if e.Param == placement.ParamEOOutbound && e.Sub != "" {
		then = e.Sub + " follows " + e.Param + " for all receivers"
	}
	tp := admin.TuneParams{Param: e.Param, Sub: e.Sub, Unset: true}
	return &pendingAction{
		command: "tune unset",
		dialog: components.Dialog{Title: fmt.Sprintf("Unset %s%s (now %d)?", e.Param, subLabel(e.Sub), e.Value),
			Lines: []string{"Then " + then + " to messages enqueued after the change; existing queues drain as they are."}},
		run: func(ctx context.Context, svc admin.Service) (string, error) {
			got, err := svc.Tune(ctx, tp)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s%s unset: now %d", e.Param, subLabel(e.Sub), got.Value), nil
		},
	}
}

func subLabel(sub string) string {
	if sub == "" {
		return ""
	}
	return " [" + sub + "]"
}
