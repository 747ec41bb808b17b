package storetest

import (
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// The parties of the fixtures: ERP and SHOP send, WMS and ARCHIVE receive.
const (
	SenderERP       = "ERP"
	SenderSHOP      = "SHOP"
	ReceiverWMS     = "WMS"
	ReceiverARCHIVE = "ARCHIVE"
)

// Receivers are the receivers the suite's nodes have configured: every
// receiver the fixtures send to. A claim or a join of the suite that names
// none gets them (a case about receivers not configured names its own).
var Receivers = []string{ReceiverARCHIVE, "CRM", ReceiverWMS}

// Now returns the current time in UTC, to the microsecond: the precision
// every store keeps, so times compare equal after a round trip.
func Now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// At returns a fixed time, minute minutes after the fixtures' epoch, for
// tests that order or filter by time.
func At(minute int) time.Time {
	return time.Date(2025, time.June, 2, 8, 0, 0, 0, time.UTC).Add(time.Duration(minute) * time.Minute)
}

// NewMessage returns a valid EO inbound message in status TBDL: sent by ERP
// to WMS, on queue XBTI0000, with a new id and created now.
func NewMessage() *domain.Message {
	now := Now()
	return &domain.Message{
		ID:        domain.NewID(),
		QoS:       domain.EO,
		Sender:    SenderERP,
		Receivers: []string{ReceiverWMS},
		Interface: "OrderCreate",
		Queue:     domain.EOInboundQueue(domain.RoleCentral, 0),
		Stage:     domain.Inbound,
		Status:    domain.StatusTBDL,
		Headers:   map[string]string{"Content-Type": "application/xml"},
		CreatedAt: now,
		UpdatedAt: now,
	}
}

// NewEOIOMessage returns a valid EOIO inbound message of appQueue in status
// TBDL, sent by SHOP to WMS, on queue XBQI<appQueue>.
func NewEOIOMessage(appQueue string) *domain.Message {
	m := NewMessage()
	m.QoS = domain.EOIO
	m.Sender = SenderSHOP
	m.AppQueue = appQueue
	m.Queue = domain.EOIOInboundQueue(domain.PrefixXBQ, domain.RoleCentral, appQueue)
	return m
}

// NewOutboundMessage returns the outbound message that receiver determination
// makes of parent for receiver, in status TBDL, on the queue §3 names for it.
func NewOutboundMessage(parent *domain.Message, receiver string) *domain.Message {
	m := parent.Clone()
	now := Now()
	m.ID = domain.NewID()
	m.Receiver = receiver
	m.Receivers = nil
	m.ParentID = parent.ID
	m.Stage = domain.Outbound
	m.Status = domain.StatusTBDL
	m.Seq, m.Size = 0, 0
	m.CreatedAt, m.UpdatedAt = now, now
	if m.QoS == domain.EOIO {
		m.Queue = domain.EOIOOutboundQueue(domain.PrefixXBQ, domain.Code4(receiver), m.AppQueue)
	} else {
		m.Queue = domain.EOOutboundQueue(domain.Code4(receiver), 1, 0)
	}
	return m
}

// InQueue returns m on another queue, for tests that need several queues
// of one kind.
func InQueue(m *domain.Message, queue string) *domain.Message {
	m.Queue = queue
	return m
}

// WithStatus returns m with another status.
func WithStatus(m *domain.Message, s domain.Status) *domain.Message {
	m.Status = s
	return m
}

// NotDelivered returns m as NDLV with an error of class c.
func NotDelivered(m *domain.Message, c domain.ErrorClass) *domain.Message {
	m.Status = domain.StatusNDLV
	m.ErrorClass = c
	m.Error = "delivery failed: " + string(c)
	m.Attempts = 1
	return m
}

// PayloadOf returns the payload the fixtures store with m.
func PayloadOf(m *domain.Message) []byte {
	return []byte(`<order id="` + m.ID + `"/>`)
}

// Entry returns a history entry made by the engine on node N1.
func Entry(reason string) domain.HistoryEntry {
	return domain.HistoryEntry{Node: "N1", Actor: "engine", Reason: reason}
}

// Prepared returns m as a prepared message of a transactional send: PEND.
func Prepared(m *domain.Message) *domain.Message {
	m.Status = domain.StatusPEND
	return m
}
