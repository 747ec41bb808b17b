package tui

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/tui/components"
)

// queueSource lists queues a page at a time: the Queues view, and the
// Blocked view (blocked only, with the blocking head).
type queueSource struct {
	blocked bool
	now     func() time.Time
}

func (s queueSource) storeFilter() bool { return true }

func (s queueSource) columns() []components.Column {
	// The columns an operator decides by stay longest; the head's id (in
	// the line under the table too) and the qos (in the queue's name) go first.
	if s.blocked {
		return []components.Column{col("QUEUE", 24), optional("QOS", 4, 8), optional("HEAD", 36, 9), col("STATUS", 6),
			optional("SINCE", 5, 3), optional("ATTEMPTS", 8, 5), optional("CRASHES", 7, 4), optional("BEHIND", 8, 2),
			// The error is whole under the table: at 80 columns the
			// counts an operator decides by stay, even by a long name.
			{Title: "ERROR", Width: 80, Min: 8}}
	}
	return []components.Column{col("QUEUE", 24), optional("QOS", 4, 7), optional("STAGE", 8, 8), col("STATE", 7), col("DEPTH", 8),
		optional("TBDL", 8, 6), optional("WAIT", 8, 5), optional("HOLD", 8, 4), col("NDLV", 8), col("HEAD", 5),
		optional("OLDEST", 6, 9), col("ERROR", 80)}
}

func (s queueSource) fetch(ctx context.Context, svc admin.Service, q pageQuery) ([]item, string, error) {
	f := admin.QueueFilter{After: q.after, Limit: q.limit + 1}
	if q.filter != "" {
		f.Name = "*" + strings.ToUpper(q.filter) + "*"
	}
	if s.blocked {
		f.States = []domain.QueueState{domain.QueueBlocked}
	}
	var items []item
	err := svc.Queues(ctx, f, func(qu *domain.Queue) error {
		items = append(items, s.item(qu))
		return nil
	})
	return page(items, q.limit, err)
}

// page cuts the extra row a fetch asked for to learn whether more follow.
func page(items []item, limit int, err error) ([]item, string, error) {
	if err != nil {
		return nil, "", err
	}
	if len(items) > limit {
		items = items[:limit]
		return items, items[limit-1].key, nil
	}
	return items, "", nil
}

func (s queueSource) item(q *domain.Queue) item {
	head := func(f func(h *domain.QueueHead) string) string {
		if q.Head == nil {
			return "-"
		}
		return f(q.Head)
	}
	status := head(func(h *domain.QueueHead) string {
		if h.Blacklisted {
			return string(h.Status) + "*"
		}
		return string(h.Status)
	})
	errText := head(func(h *domain.QueueHead) string { return dash(h.Error) })
	var note string
	if q.Head != nil && q.Head.Error != "" {
		note = oneLine(q.Head.Error) + "  (" + q.Name + ", head " + q.Head.ID + ")"
	}
	count := func(st domain.Status) string { return strconv.FormatInt(q.Counts[st], 10) }
	var cells []string
	if s.blocked {
		cells = []string{q.Name, string(q.QoS), head(func(h *domain.QueueHead) string { return h.ID }), status,
			output.Age(q.BlockedSince, s.now()), head(func(h *domain.QueueHead) string { return strconv.Itoa(h.Attempts) }),
			head(func(h *domain.QueueHead) string { return strconv.Itoa(h.Crashes) }),
			behindCell(q), errText}
	} else {
		cells = []string{q.Name, string(q.QoS), string(q.Stage), string(q.State), strconv.FormatInt(q.Depth, 10),
			count(domain.StatusTBDL), count(domain.StatusWAIT), count(domain.StatusHOLD), count(domain.StatusNDLV),
			status, output.Age(q.OldestAt, s.now()), errText}
	}
	return item{key: q.Name, cells: cells, queue: q, note: note}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return oneLine(s)
}

// oneLine puts a text that may hold line breaks on one line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

func behindCell(q *domain.Queue) string {
	if q.Behind == nil {
		return "-"
	}
	return strconv.FormatInt(*q.Behind, 10)
}
