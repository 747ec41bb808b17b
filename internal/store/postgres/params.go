package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/domain"
)

// Param returns one tuning value; ok is false when it is not set. A
// transaction reads the values once, all of them at its first: there are
// few, and placement reads several for every message it sends.
func (t *txn) Param(name, sub string) (int, bool, error) {
	key := [2]string{clean(name), clean(sub)}
	if p, ok := t.params[key]; ok || t.paramsRead {
		return p.value, p.ok, nil
	}
	// The tuning values are none of what the transaction holds back.
	rows, err := t.direct().Query(t.ctx, `SELECT name, sub, value FROM params`)
	if err != nil {
		return 0, false, fmt.Errorf("parameter %s %s: %w", name, sub, err)
	}
	var k [2]string
	var v int
	_, err = pgx.ForEachRow(rows, []any{&k[0], &k[1], &v}, func() error {
		if _, ok := t.params[k]; !ok {
			t.params[k] = param{value: v, ok: true}
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("parameter %s %s: %w", name, sub, err)
	}
	t.paramsRead = true
	p := t.params[key]
	return p.value, p.ok, nil
}

// Params calls fn for each tuning value set, ordered by name and sub. There
// are few: they are read at once.
func (t *txn) Params(fn func(domain.Param) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT name, sub, value FROM params ORDER BY name, sub`)
	if err != nil {
		return fmt.Errorf("list parameters: %w", err)
	}
	params, err := pgx.CollectRows(rows, pgx.RowToStructByPos[domain.Param])
	if err != nil {
		return fmt.Errorf("list parameters: %w", err)
	}
	for _, p := range params {
		if err := fn(p); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// SetParam stores a tuning value.
func (t *txn) SetParam(p domain.Param) error {
	if p.Name == "" {
		return domain.Invalidf("parameter name is empty")
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO params (name, sub, value) VALUES ($1, $2, $3)
		ON CONFLICT (name, sub) DO UPDATE SET value = EXCLUDED.value`, clean(p.Name), clean(p.Sub), p.Value)
	if err != nil {
		return fmt.Errorf("parameter %s %s: store: %w", p.Name, p.Sub, err)
	}
	t.params[[2]string{clean(p.Name), clean(p.Sub)}] = param{value: p.Value, ok: true}
	return nil
}

// UnsetParam removes a tuning value; one that is not set is fine.
func (t *txn) UnsetParam(name, sub string) error {
	if _, err := t.tx.Exec(t.ctx, `DELETE FROM params WHERE name = $1 AND sub = $2`, clean(name), clean(sub)); err != nil {
		return fmt.Errorf("parameter %s %s: delete: %w", name, sub, err)
	}
	t.params[[2]string{clean(name), clean(sub)}] = param{}
	return nil
}
