package tui

import (
	"context"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// auditSource lists the audit log newest first, as audit list does, a page at a time.
type auditSource struct{}

func (auditSource) storeFilter() bool { return false }

func (auditSource) columns() []components.Column {
	return []components.Column{optional("SEQ", 4, 2), col("AT", 20), col("ACTOR", 14), optional("SOURCE", 8, 3), col("ACTION", 17),
		col("RESULT", 8), col("TARGETS", 30)}
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
		items = append(items, item{key: strconv.FormatUint(e.Seq, 10), cells: []string{strconv.FormatUint(e.Seq, 10),
			e.At.UTC().Format("2006-01-02 15:04:05Z"), e.Actor, e.Source, e.Action, e.Result, targets}})
		return nil
	})
	return page(items, q.limit, err)
}
