package postgres

import (
	"context"
	"fmt"
)

// Size returns the disk space of queuectl's tables, with their indexes and
// TOAST, in the schema the store uses: what `queuectl bench` reports as the
// store's growth per message.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `
		SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c
		WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("the store's size: %w", err)
	}
	return n, nil
}
