package postgres

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
)

// messageColumns are the columns every read of a message selects, in the
// order scanMessage reads them.
const messageColumns = `id, seq, size, payload_id, parent_id, incarnation, created_at, updated_at, next_attempt_at,
	attempts, crashes, blacklisted, queue, status, qos, stage, sender, receiver, receivers, interface, app_queue,
	error, error_class, node, headers, checks, last_check_at, last_answer, stuck`

// storedMessage is a message as read, with the payload it refers to.
type storedMessage struct {
	*domain.Message
	payloadID pgtype.UUID
}

// scanMessage reads one row of messageColumns.
func scanMessage(row pgx.Row) (*storedMessage, error) {
	var (
		m                                               domain.Message
		id, payload, parent                             pgtype.UUID
		seq, incarnation                                pgtype.Int8
		next, checked                                   pgtype.Timestamptz
		receiver, iface, appQueue, errText, class, node pgtype.Text
		answer                                          pgtype.Text
	)
	err := row.Scan(&id, &seq, &m.Size, &payload, &parent, &incarnation, &m.CreatedAt, &m.UpdatedAt, &next,
		&m.Attempts, &m.Crashes, &m.Blacklisted, &m.Queue, &m.Status, &m.QoS, &m.Stage, &m.Sender, &receiver,
		&m.Receivers, &iface, &appQueue, &errText, &class, &node, &m.Headers, &m.Checks, &checked, &answer, &m.Stuck)
	if err != nil {
		return nil, err
	}
	m.ID = uuid.UUID(id.Bytes).String()
	if parent.Valid {
		m.ParentID = uuid.UUID(parent.Bytes).String()
	}
	m.Seq, m.Incarnation = uint64(seq.Int64), uint64(incarnation.Int64)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if next.Valid {
		at := next.Time.UTC()
		m.NextAttemptAt = &at
	}
	m.Receiver, m.Interface, m.AppQueue, m.Error = receiver.String, iface.String, appQueue.String, errText.String
	m.ErrorClass, m.Node = domain.ErrorClass(class.String), node.String
	if checked.Valid {
		at := checked.Time.UTC()
		m.LastCheckAt = &at
	}
	m.LastAnswer = answer.String
	return &storedMessage{Message: &m, payloadID: payload}, nil
}

// storedTimes sets m's times to what the database keeps of them: UTC, to the
// microsecond (pgx sends whole microseconds), so that the message a write
// returns equals the one a read finds.
func storedTimes(m *domain.Message) {
	m.CreatedAt, m.UpdatedAt = storedTime(m.CreatedAt), storedTime(m.UpdatedAt)
	if m.NextAttemptAt != nil {
		at := storedTime(*m.NextAttemptAt)
		m.NextAttemptAt = &at
	}
	if m.LastCheckAt != nil {
		at := storedTime(*m.LastCheckAt)
		m.LastCheckAt = &at
	}
}

func storedTime(t time.Time) time.Time {
	return t.Truncate(time.Microsecond).UTC()
}

// messageValues are the values of m's columns that a change may set, in
// the order of the parameters $2... of insertMessage and updateMessage ($1 is
// the id).
func messageValues(m *domain.Message) []any {
	parent, _ := parseID(m.ParentID)
	var seq, incarnation pgtype.Int8
	if m.Seq > 0 {
		seq = pgtype.Int8{Int64: int64(m.Seq), Valid: true}
	}
	if m.Incarnation > 0 {
		incarnation = pgtype.Int8{Int64: int64(m.Incarnation), Valid: true}
	}
	var next pgtype.Timestamptz
	if m.NextAttemptAt != nil {
		next = pgtype.Timestamptz{Time: *m.NextAttemptAt, Valid: true}
	}
	return []any{
		seq, m.Size, parent, incarnation, m.CreatedAt, m.UpdatedAt, next,
		m.Attempts, m.Crashes, m.Blacklisted, domain.PassedOver(m.QoS, m.Status, m.ErrorClass),
		m.Status, m.QoS, m.Stage, clean(m.Sender), optional(m.Receiver), names(m.Receivers), optional(m.Interface),
		optional(m.AppQueue), optional(m.Error), optional(string(m.ErrorClass)), optional(m.Node), headers(m.Headers),
	}
}

// The columns of messageValues, for the statements that write them.
const (
	insertMessage = `INSERT INTO messages (id, seq, size, parent_id, incarnation, created_at, updated_at,
		next_attempt_at, attempts, crashes, blacklisted, passed_over, status, qos, stage, sender, receiver,
		receivers, interface, app_queue, error, error_class, node, headers, queue, payload_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
		$22, $23, $24, $25, $26)`
	updateMessage = `UPDATE messages SET seq = $2, size = $3, parent_id = $4, incarnation = $5, created_at = $6,
		updated_at = $7, next_attempt_at = $8, attempts = $9, crashes = $10, blacklisted = $11, passed_over = $12,
		status = $13, qos = $14, stage = $15, sender = $16, receiver = $17, receivers = $18, interface = $19,
		app_queue = $20, error = $21, error_class = $22, node = $23, headers = $24 WHERE id = $1`
)

// insertHistory appends a history entry after the message's last one.
const insertHistory = `INSERT INTO history (message_id, n, at, from_status, to_status, node, actor, reason)
	SELECT $1::uuid, coalesce(max(n), 0) + 1, $2::timestamptz, $3::text, $4::text, $5::text, $6::text, $7::text
	FROM history WHERE message_id = $1::uuid`

// historyValues are the parameters $2... of insertHistory.
func historyValues(h domain.HistoryEntry) []any {
	return []any{h.At, optional(string(h.From)), string(h.To), optional(h.Node), clean(h.Actor), optional(h.Reason)}
}

// parseID returns the UUID an id names; ok is false for a string that is
// not a UUID, which names no message.
func parseID(id string) (pgtype.UUID, bool) {
	if id == "" {
		return pgtype.UUID{}, false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return pgtype.UUID{}, false
	}
	return pgtype.UUID{Bytes: u, Valid: true}, true
}

func notFound(id string) error {
	return domain.NotFoundf("message %s does not exist", id)
}

// optional stores an empty string as NULL.
func optional(s string) pgtype.Text {
	return pgtype.Text{String: clean(s), Valid: s != ""}
}

// names stores an empty list as NULL, so that it reads back as nil.
func names(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = clean(s)
	}
	return out
}

// headers stores no headers as NULL, so that they read back as nil.
func headers(h map[string]string) any {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[clean(k)] = clean(v)
	}
	return out
}

// clean makes free text storable: PostgreSQL's text holds neither NUL nor
// invalid UTF-8. Invalid bytes become U+FFFD, as in the embedded store's
// JSON; so does NUL, which the input rules (§2) keep out of everything but
// the error texts receivers return.
func clean(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
