package bolt

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The stored forms below have their own JSON names, so the file format does
// not change when the API's JSON does. Each converts to and from its domain
// type by a plain type conversion: a field added to the domain type breaks
// the build here until the stored form has it too.

// storedMessage is the metadata of a message; the payload and the history
// live in their own buckets.
type storedMessage struct {
	ID            string                `json:"id"`
	QoS           domain.QoS            `json:"qos"`
	Sender        string                `json:"sender,omitempty"`
	Receiver      string                `json:"receiver,omitempty"`
	Receivers     []string              `json:"receivers,omitempty"`
	Interface     string                `json:"interface,omitempty"`
	AppQueue      string                `json:"app_queue,omitempty"`
	Queue         string                `json:"queue"`
	Stage         domain.Stage          `json:"stage"`
	Seq           uint64                `json:"seq,omitempty"`
	Status        domain.Status         `json:"status"`
	Attempts      int                   `json:"attempts,omitempty"`
	Crashes       int                   `json:"crashes,omitempty"`
	Blacklisted   bool                  `json:"blacklisted,omitempty"`
	Error         string                `json:"error,omitempty"`
	ErrorClass    domain.ErrorClass     `json:"error_class,omitempty"`
	ParentID      string                `json:"parent_id,omitempty"`
	Headers       map[string]string     `json:"headers,omitempty"`
	Size          int64                 `json:"size"`
	CreatedAt     time.Time             `json:"created_at"`
	UpdatedAt     time.Time             `json:"updated_at"`
	NextAttemptAt *time.Time            `json:"next_attempt_at,omitempty"`
	Node          string                `json:"node,omitempty"`
	Incarnation   uint64                `json:"incarnation,omitempty"`
	History       []domain.HistoryEntry `json:"-"`
}

// storedHistory is one history entry.
type storedHistory struct {
	At     time.Time     `json:"at"`
	From   domain.Status `json:"from,omitempty"`
	To     domain.Status `json:"to"`
	Node   string        `json:"node,omitempty"`
	Actor  string        `json:"actor,omitempty"`
	Reason string        `json:"reason,omitempty"`
}

// storedQueue is a queue record with its counters.
type storedQueue struct {
	Name       string                  `json:"name"`
	QoS        domain.QoS              `json:"qos"`
	Stage      domain.Stage            `json:"stage"`
	Receiver   string                  `json:"receiver,omitempty"`
	Stopped    bool                    `json:"stopped,omitempty"`
	Epoch      uint64                  `json:"epoch,omitempty"`
	Counts     map[domain.Status]int64 `json:"counts,omitempty"`
	PassedOver int64                   `json:"passed_over,omitempty"`
	LastSeq    uint64                  `json:"last_seq,omitempty"`
	CreatedAt  time.Time               `json:"created_at"`
}

// storedAudit is one audit entry; its seq is the key.
type storedAudit struct {
	Seq     uint64    `json:"-"`
	At      time.Time `json:"at"`
	Actor   string    `json:"actor"`
	Source  string    `json:"source,omitempty"`
	Action  string    `json:"action"`
	Targets []string  `json:"targets,omitempty"`
	Result  string    `json:"result"`
	Detail  string    `json:"detail,omitempty"`
}

func encodeMessage(m *domain.Message) ([]byte, error) {
	s := storedMessage(*m)
	s.History = nil
	return json.Marshal(&s)
}

// decodeMessage decodes into new memory, so the result outlives the
// transaction whose mapped bytes it was read from.
func decodeMessage(v []byte) (*domain.Message, error) {
	var s storedMessage
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("decode message: %w", err)
	}
	m := domain.Message(s)
	return &m, nil
}

func encodeHistory(h domain.HistoryEntry) ([]byte, error) {
	return json.Marshal(storedHistory(h))
}

func decodeHistory(v []byte) (domain.HistoryEntry, error) {
	var s storedHistory
	if err := json.Unmarshal(v, &s); err != nil {
		return domain.HistoryEntry{}, fmt.Errorf("decode history entry: %w", err)
	}
	return domain.HistoryEntry(s), nil
}

func encodeQueue(q *store.QueueRecord) ([]byte, error) {
	return json.Marshal(storedQueue(*q))
}

func decodeQueue(v []byte) (*store.QueueRecord, error) {
	var s storedQueue
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("decode queue: %w", err)
	}
	q := store.QueueRecord(s)
	if q.Counts == nil {
		q.Counts = map[domain.Status]int64{}
	}
	return &q, nil
}

func encodeAudit(e *domain.AuditEntry) ([]byte, error) {
	return json.Marshal(storedAudit(*e))
}

func decodeAudit(seq uint64, v []byte) (*domain.AuditEntry, error) {
	var s storedAudit
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("decode audit entry %d: %w", seq, err)
	}
	s.Seq = seq
	e := domain.AuditEntry(s)
	return &e, nil
}
