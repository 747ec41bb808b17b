package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// auditSource lists the audit log newest first, as audit list does, a page at a time.
type auditSource struct{}

func (auditSource) storeFilter() bool { return false }

// columns: a source address is as wide as an IPv6 one can be; the detail
// takes the rest of the line, and the line under the table has it whole.
func (auditSource) columns() []components.Column {
	return []components.Column{optional("SEQ", 6, 3), col("AT", 20), col("ACTOR", 20), optional("SOURCE", 39, 4),
		col("ACTION", 30), col("RESULT", 8), optional("TARGETS", 30, 2), col("DETAIL", 120)}
}

func (auditSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	var after uint64
	if q.after != "" {
		after, _ = strconv.ParseUint(q.after, 10, 64)
	}
	var items []item
	err := svc.Audit(ctx, admin.AuditFilter{After: after, Limit: q.limit + 1}, func(e *domain.AuditEntry) error {
		targets := strconv.Itoa(len(e.Targets))
		if len(e.Targets) > 0 {
			targets += ": " + strings.Join(e.Targets, " ")
		}
		var note string
		if e.Detail != "" {
			note = oneLine(e.Detail) + "  (entry " + strconv.FormatUint(e.Seq, 10) + ")"
		}
		items = append(items, item{key: strconv.FormatUint(e.Seq, 10), audit: e, note: note,
			cells: []string{strconv.FormatUint(e.Seq, 10), e.At.UTC().Format("2006-01-02 15:04:05Z"), e.Actor, e.Source,
				e.Action, e.Result, targets, dash(e.Detail)}})
		return nil
	})
	return page(items, q.limit, err)
}

// auditEntryPage is the detail of one audit entry, which enter opens: every
// field, each target on a line of its own, the detail whole.
type auditEntryPage struct {
	entry  *domain.AuditEntry
	offset int
}

func (p *auditEntryPage) lines() []string {
	e := p.entry
	kv := func(k, v string) string { return fmt.Sprintf("%-16s %s", k+":", v) }
	out := []string{
		kv("seq", strconv.FormatUint(e.Seq, 10)),
		kv("at", e.At.UTC().Format("2006-01-02T15:04:05Z")),
		kv("actor", e.Actor),
		kv("source", dash(e.Source)),
		kv("action", e.Action),
		kv("result", e.Result),
		"", fmt.Sprintf("Targets (%d):", len(e.Targets)),
	}
	for _, t := range e.Targets {
		out = append(out, "  "+t)
	}
	out = append(out, "", "Detail:")
	for _, l := range strings.Split(dash(e.Detail), "\n") {
		out = append(out, "  "+l)
	}
	// Operators, tokens and refused requests wrote most of it.
	for i, l := range out {
		out[i] = output.Escape(l)
	}
	return out
}
