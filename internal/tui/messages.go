package tui

import (
	"context"
	"strconv"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// queueMessageSource lists one queue's messages in seq order, delivered and
// failed ones included, so that an action's effect stays in sight.
type queueMessageSource struct{ now func() time.Time }

func (queueMessageSource) storeFilter() bool { return false }

func (queueMessageSource) columns() []components.Column {
	return []components.Column{col("SEQ", 8), optional("ID", 36, 9), col("STATUS", 6), optional("ATTEMPTS", 8, 5), optional("CRASHES", 7, 4),
		optional("SENDER", 10, 7), optional("RECEIVER", 10, 6), optional("AGE", 5, 3), col("ERROR", 80)}
}

func (s queueMessageSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	var after uint64
	if q.after != "" {
		after, _ = strconv.ParseUint(q.after, 10, 64)
	}
	var items []item
	err := svc.QueueMessages(ctx, q.queue, admin.QueueMessagesParams{All: true, AfterSeq: after, Limit: q.limit + 1},
		func(m *domain.Message) error {
			it := messageItem(m, s.now())
			it.key = strconv.FormatUint(m.Seq, 10)
			items = append(items, it)
			return nil
		})
	return page(items, q.limit, err)
}

func messageItem(m *domain.Message, now time.Time) item {
	st := string(m.Status)
	if m.Blacklisted {
		st += "*"
	}
	var note string
	if m.Error != "" {
		note = oneLine(m.Error) + "  (" + m.ID + ")"
	}
	return item{key: m.ID, msg: m, note: note, cells: []string{strconv.FormatUint(m.Seq, 10), m.ID, st,
		strconv.Itoa(m.Attempts), strconv.Itoa(m.Crashes), m.Sender, dash(m.Receiver), output.Age(&m.CreatedAt, now),
		dash(m.Error)}}
}

// blacklistSource lists the blacklisted NDLV messages (§4), a page at a time.
type blacklistSource struct{ now func() time.Time }

func (blacklistSource) storeFilter() bool { return false }

func (blacklistSource) columns() []components.Column {
	return []components.Column{col("ID", 36), col("QUEUE", 24), optional("RECEIVER", 10, 3), col("CRASHES", 7), optional("LAST CRASH", 10, 4),
		optional("NODE", 8, 5), optional("AGE", 5, 6)}
}

func (s blacklistSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	yes := true
	f := admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}, Blacklisted: &yes, After: q.after,
		Limit: q.limit + 1}
	var items []item
	err := svc.Messages(ctx, f, func(m *domain.Message) error {
		now := s.now()
		items = append(items, item{key: m.ID, msg: m, note: oneLine(m.Error) + "  (" + m.ID + ")", cells: []string{m.ID, m.Queue, dash(m.Receiver),
			strconv.Itoa(m.Crashes), output.Age(&m.UpdatedAt, now), dash(m.Node), output.Age(&m.CreatedAt, now)}})
		return nil
	})
	return page(items, q.limit, err)
}
