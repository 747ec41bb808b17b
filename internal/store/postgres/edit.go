package postgres

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// earlierVersions counts the versions kept of a message's payload besides
// its current one.
func (t *txn) earlierVersions(uid pgtype.UUID) (int, error) {
	var n int
	if err := t.tx.QueryRow(t.ctx, `SELECT count(*) FROM payload_versions WHERE message_id = $1`, uid).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// PayloadVersions returns how many versions of its payload a message has.
func (t *txn) PayloadVersions(id string) (int, error) {
	if _, err := t.message(id); err != nil {
		return 0, err
	}
	uid, _ := parseID(id)
	n, err := t.earlierVersions(uid)
	if err != nil {
		return 0, fmt.Errorf("message %s: payload versions: %w", id, err)
	}
	return n + 1, nil
}

// PayloadVersion returns version n of a message's payload.
func (t *txn) PayloadVersion(id string, n int) ([]byte, error) {
	last, err := t.PayloadVersions(id)
	if err != nil {
		return nil, err
	}
	switch {
	case n < 1 || n > last:
		return nil, noVersion(id, n, last)
	case n == last:
		return t.Payload(id)
	}
	uid, _ := parseID(id)
	var p []byte
	err = t.tx.QueryRow(t.ctx, `SELECT p.data FROM payload_versions v JOIN payloads p ON p.id = v.payload_id
		WHERE v.message_id = $1 AND v.version = $2`, uid, n).Scan(&p)
	if err != nil {
		return nil, fmt.Errorf("message %s: payload version %d: %w", id, n, err)
	}
	if p == nil {
		p = []byte{}
	}
	return p, nil
}

// noVersion is the error of a payload version a message does not have.
func noVersion(id string, n, last int) error {
	if last == 1 {
		return domain.NotFoundf("message %s has no payload version %d: it has only version 1, the payload it was sent with", id, n)
	}
	return domain.NotFoundf("message %s has no payload version %d: its versions are 1 to %d", id, n, last)
}

// EditPayload replaces a message's payload by a new version. The message
// refers to a new payload row; the reference it held moves to the row of
// the version it replaces, so a payload shared with the other messages of
// a split keeps its count.
func (t *txn) EditPayload(p store.EditPayloadParams) (*domain.Message, error) {
	cur, err := t.message(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	uid, _ := parseID(p.ID)
	earlier, err := t.earlierVersions(uid)
	if err != nil {
		return nil, fmt.Errorf("message %s: payload versions: %w", p.ID, err)
	}
	if version := earlier + 1; p.Version != version {
		return nil, fmt.Errorf("message %s: the edit replaces payload version %d, but the current one is %d: %w",
			p.ID, p.Version, version, store.ErrVersionChanged)
	}
	newID, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	pid := pgtype.UUID{Bytes: newID, Valid: true}
	size := int64(len(p.Payload))
	next, err := t.change(cur, cur.Status, func(m *domain.Message) { m.Size = size }, p.History)
	if err != nil {
		return nil, err
	}
	// After the message's own update (pending.drain sends raw statements
	// last), which leaves payload_id alone.
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO payloads (id, refs, data) VALUES ($1, 1, $2)`, pid, append([]byte{}, p.Payload...))
	b.Queue(`INSERT INTO payload_versions (message_id, version, payload_id) VALUES ($1, $2, $3)`, uid, p.Version, cur.payloadID)
	b.Queue(`UPDATE messages SET payload_id = $2 WHERE id = $1`, uid, pid)
	t.pend.raw = append(t.pend.raw, b.QueuedQueries...)
	return next, nil
}
