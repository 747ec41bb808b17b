package postgres

import (
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/queuectl/queuectl/internal/domain"
)

// codeCache holds the receiver codes (§3) the store has read as committed:
// a code, once given, never changes, so placement, which needs one for
// every message it routes, reads each from the database once per process.
type codeCache struct{ m sync.Map } // receiver → code

// ReceiverCode returns the code the store assigned a receiver.
func (t *txn) ReceiverCode(receiver string) (string, error) {
	if code, ok := t.newCodes[receiver]; ok {
		return code, nil
	}
	if t.codes != nil {
		if code, ok := t.codes.m.Load(receiver); ok {
			return code.(string), nil
		}
	}
	var code string
	// The codes are none of what the transaction holds back.
	err := t.direct().QueryRow(t.ctx, `SELECT code FROM receiver_codes WHERE receiver = $1`, clean(receiver)).Scan(&code)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", domain.NotFoundf("receiver %s has no code yet", receiver)
	case err != nil:
		return "", fmt.Errorf("receiver %s: read its code: %w", receiver, err)
	}
	if t.codes != nil {
		t.codes.m.Store(receiver, code) // committed: not one this transaction gave
	}
	return code, nil
}

// ReceiverCodes calls fn for each receiver with a code, by name.
func (t *txn) ReceiverCodes(fn func(receiver, code string) error) error {
	rows, err := t.direct().Query(t.ctx, `SELECT receiver, code FROM receiver_codes ORDER BY receiver`)
	if err != nil {
		return fmt.Errorf("list receiver codes: %w", err)
	}
	type pair struct{ Receiver, Code string }
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[pair])
	if err != nil {
		return fmt.Errorf("list receiver codes: %w", err)
	}
	for _, p := range all {
		if err := fn(p.Receiver, p.Code); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// PutReceiverCode gives receiver the code unless one of them has been
// given already. A transaction giving either at the same time makes this
// one wait for its commit, then find the row.
func (t *txn) PutReceiverCode(receiver, code string) (bool, error) {
	if !domain.ValidCode(code) {
		return false, domain.Invalidf("receiver code %q is not four uppercase hex digits", code)
	}
	tag, err := t.direct().Exec(t.ctx, `INSERT INTO receiver_codes (receiver, code) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		clean(receiver), code)
	if err != nil {
		return false, fmt.Errorf("receiver %s: store its code: %w", receiver, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if t.newCodes == nil {
		t.newCodes = map[string]string{}
	}
	t.newCodes[receiver] = code
	return true, nil
}
