package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	error, error_class, node, headers, checks, last_check_at, last_answer, stuck, key, inbound_queue`

// storedMessage is a message as read, with the payload it refers to.
type storedMessage struct {
	*domain.Message
	payloadID pgtype.UUID
}

// scanMessage reads one row of messageColumns.
func scanMessage(row pgx.Row) (*storedMessage, error) {
	var ms messageScan
	if err := row.Scan(ms.dest()...); err != nil {
		return nil, err
	}
	return ms.message(), nil
}

// messageScan holds the columns of messageColumns as scanned, for a row
// that has other columns too (dest, then message).
type messageScan struct {
	m                                               domain.Message
	id, payload, parent                             pgtype.UUID
	seq, incarnation                                pgtype.Int8
	next, checked                                   pgtype.Timestamptz
	receiver, iface, appQueue, errText, class, node pgtype.Text
	answer, key, inbound                            pgtype.Text
}

// dest returns where the columns of messageColumns scan to, in their order.
func (s *messageScan) dest() []any {
	m := &s.m
	return []any{&s.id, &s.seq, &m.Size, &s.payload, &s.parent, &s.incarnation, &m.CreatedAt, &m.UpdatedAt, &s.next,
		&m.Attempts, &m.Crashes, &m.Blacklisted, &m.Queue, &m.Status, &m.QoS, &m.Stage, &m.Sender, &s.receiver,
		&m.Receivers, &s.iface, &s.appQueue, &s.errText, &s.class, &s.node, &m.Headers, &m.Checks, &s.checked, &s.answer,
		&m.Stuck, &s.key, &s.inbound}
}

// message returns the message scanned.
func (s *messageScan) message() *storedMessage {
	m := s.m
	m.ID = uuid.UUID(s.id.Bytes).String()
	if s.parent.Valid {
		m.ParentID = uuid.UUID(s.parent.Bytes).String()
	}
	m.Seq, m.Incarnation = uint64(s.seq.Int64), uint64(s.incarnation.Int64)
	m.CreatedAt, m.UpdatedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC()
	if s.next.Valid {
		at := s.next.Time.UTC()
		m.NextAttemptAt = &at
	}
	m.Receiver, m.Interface, m.AppQueue, m.Error = s.receiver.String, s.iface.String, s.appQueue.String, s.errText.String
	m.ErrorClass, m.Node = domain.ErrorClass(s.class.String), s.node.String
	if s.checked.Valid {
		at := s.checked.Time.UTC()
		m.LastCheckAt = &at
	}
	m.LastAnswer, m.Key, m.InboundQueue = s.answer.String, s.key.String, s.inbound.String
	return &storedMessage{Message: &m, payloadID: s.payload}
}

// messageColumnCount is how many columns messageColumns lists.
var messageColumnCount = len((&messageScan{}).dest())

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
		m.Queue, optional(m.InboundQueue),
	}
}

// updateMessage writes the columns of messageValues ($2...$26) of message
// $1 and appends the encoded history entries $27 to its history.
const (
	updateMessage = `UPDATE messages SET seq = $2, size = $3, parent_id = $4, incarnation = $5, created_at = $6,
		updated_at = $7, next_attempt_at = $8, attempts = $9, crashes = $10, blacklisted = $11, passed_over = $12,
		status = $13, qos = $14, stage = $15, sender = $16, receiver = $17, receivers = $18, interface = $19,
		app_queue = $20, error = $21, error_class = $22, node = $23, headers = $24, queue = $25, inbound_queue = $26,
		history = history || $27
		WHERE id = $1`
)

// A message's history is one value in its row (messages.history): its
// entries, oldest first, each the time in microseconds since the epoch
// (int8, big-endian) and then from, to, node, actor and reason, each a
// length (int4, big-endian) and that many bytes of UTF-8. A status change
// appends its entry in the statement that changes the row (history =
// history || $n), so recording it writes no row and no index entry of its
// own. Migration 00007 builds the same encoding in SQL.

// appendHistory appends the encoding of h to dst.
func appendHistory(dst []byte, h domain.HistoryEntry) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.At.UnixMicro()))
	for _, f := range [...]string{string(h.From), string(h.To), clean(h.Node), clean(h.Actor), clean(h.Reason)} {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(f)))
		dst = append(dst, f...)
	}
	return dst
}

// DecodeHistory reads the entries appendHistory wrote: the history column
// of a message row, for a reader of the table itself (the cluster tests).
func DecodeHistory(b []byte) ([]domain.HistoryEntry, error) {
	var out []domain.HistoryEntry
	for len(b) > 0 {
		if len(b) < 8 {
			return nil, errors.New("history: truncated entry")
		}
		h := domain.HistoryEntry{At: time.UnixMicro(int64(binary.BigEndian.Uint64(b))).UTC()}
		b = b[8:]
		var f [5]string
		for i := range f {
			if len(b) < 4 || uint64(len(b)-4) < uint64(binary.BigEndian.Uint32(b)) {
				return nil, errors.New("history: truncated entry")
			}
			n := binary.BigEndian.Uint32(b)
			f[i], b = string(b[4:4+n]), b[4+n:]
		}
		h.From, h.To, h.Node, h.Actor, h.Reason = domain.Status(f[0]), domain.Status(f[1]), f[2], f[3], f[4]
		out = append(out, h)
	}
	return out, nil
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

// rowScanner scans rows column by column, as pgx.Rows.Scan does but with
// plans of its own, so that a row with a column that does not decode (a
// damaged row) fails alone: Rows.Scan would end the whole result.
type rowScanner struct {
	plans []pgtype.ScanPlan
}

// scan scans the current row of rows into dest; a nil dest skips its
// column.
func (s *rowScanner) scan(rows pgx.Rows, dest ...any) error {
	fds, raw := rows.FieldDescriptions(), rows.RawValues()
	if len(fds) != len(dest) || len(raw) != len(dest) {
		return fmt.Errorf("a row of %d columns scanned into %d destinations", len(fds), len(dest))
	}
	if s.plans == nil {
		s.plans = make([]pgtype.ScanPlan, len(dest))
	}
	m := rows.Conn().TypeMap()
	for i, d := range dest {
		if d == nil {
			continue
		}
		if s.plans[i] == nil {
			s.plans[i] = m.PlanScan(fds[i].DataTypeOID, fds[i].Format, d)
		}
		if err := s.plans[i].Scan(raw[i], d); err != nil {
			return pgx.ScanArgError{ColumnIndex: i, FieldName: fds[i].Name, Err: err}
		}
	}
	return nil
}
