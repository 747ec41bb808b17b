package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// AppendAudit appends e to the audit log, setting its Seq (and At, from the
// database's clock, when zero).
func (t *txn) AppendAudit(e *domain.AuditEntry) error {
	if e.At.IsZero() {
		at, err := t.now()
		if err != nil {
			return err
		}
		e.At = at
	}
	e.At = storedTime(e.At)
	targets := make([]string, len(e.Targets))
	for i, s := range e.Targets {
		targets[i] = clean(s)
	}
	err := t.tx.QueryRow(t.ctx, `INSERT INTO audit (at, actor, source, action, targets, result, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq`,
		e.At, clean(e.Actor), clean(e.Source), clean(e.Action), names(targets), clean(e.Result), optional(e.Detail)).Scan(&e.Seq)
	if err != nil {
		return fmt.Errorf("audit: store: %w", err)
	}
	return nil
}

// Audit calls fn for the audit entries matching f, oldest first, a page at
// a time. Since is inclusive.
func (t *txn) Audit(f store.AuditFilter, fn func(*domain.AuditEntry) error) error {
	var since pgtype.Timestamptz
	if !f.Since.IsZero() {
		since = pgtype.Timestamptz{Time: f.Since, Valid: true}
	}
	after := int64(min(f.AfterSeq, uint64(1)<<63-1))
	lim := limiter{limit: f.Limit}
	for {
		n := lim.page()
		rows, err := t.tx.Query(t.ctx, `SELECT seq, at, actor, source, action, targets, result, coalesce(detail, '')
			FROM audit WHERE seq > $1 AND ($2::timestamptz IS NULL OR at >= $2) AND ($3 = '' OR actor = $3)
			ORDER BY seq LIMIT $4`, after, since, f.Actor, n)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		page, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*domain.AuditEntry, error) {
			var e domain.AuditEntry
			err := row.Scan(&e.Seq, &e.At, &e.Actor, &e.Source, &e.Action, &e.Targets, &e.Result, &e.Detail)
			e.At = e.At.UTC()
			return &e, err
		})
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return stopped(err)
			}
			after = int64(e.Seq)
			if lim.done() {
				return nil
			}
		}
		if len(page) < n {
			return nil
		}
	}
}
