package bolt

import (
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Move takes a message out of its queue and puts it at the end of another,
// its status unchanged.
func (t *txn) Move(p store.MoveParams) (*domain.Message, error) {
	if err := validName("queue to move to", p.Queue); err != nil {
		return nil, err
	}
	cur, key, err := t.lookup(p.ID)
	if err != nil {
		return nil, err
	}
	if err := domain.ExpectStatus(p.ID, cur.Status, p.From); err != nil {
		return nil, err
	}
	switch {
	case cur.Status == domain.StatusDLNG:
		return nil, domain.Invalidf("message %s is being delivered (DLNG): it cannot move to %s", p.ID, p.Queue)
	case cur.Queue == p.Queue:
		return nil, domain.Invalidf("message %s is in queue %s already", p.ID, p.Queue)
	}
	from, err := t.queue(cur.Queue)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", p.ID, err)
	}
	h := p.History
	if h.At.IsZero() {
		h.At = t.now()
	}
	h.At = h.At.UTC().Truncate(time.Microsecond)
	h.From, h.To = cur.Status, cur.Status
	next := cur.Clone()
	next.Queue, next.Seq, next.UpdatedAt, next.History = p.Queue, 0, h.At, nil
	to, err := t.queueFor(next, h)
	if err != nil {
		return nil, err
	}
	if to.QoS != next.QoS || to.Stage != next.Stage || to.Receiver != receiverOf(next) {
		return nil, domain.Invalidf("message %s (%s, %s) cannot move to queue %s (%s, %s%s)", p.ID, next.QoS, next.Stage,
			p.Queue, to.QoS, to.Stage, receiverNote(to.Receiver))
	}
	if next.Status != domain.StatusPEND {
		to.LastSeq++
		next.Seq = to.LastSeq
	}
	entries, err := t.historyOf(key, cur)
	if err != nil {
		return nil, err
	}
	if entries, err = appendHistoryEntry(entries, h); err != nil {
		return nil, fmt.Errorf("message %s: encode history: %w", p.ID, err)
	}
	if err := t.putWithHistory(key, cur, next, entries); err != nil {
		return nil, err
	}
	if err := t.reindex(key, cur.Message, next); err != nil {
		return nil, err
	}
	count(from, cur.Message, -1)
	count(to, next, 1)
	if err := t.putQueue(from); err != nil {
		return nil, err
	}
	return next, t.putQueue(to)
}

// receiverOf is the receiver of the queue a message is in: an outbound
// queue's.
func receiverOf(m *domain.Message) string {
	if m.Stage == domain.Outbound {
		return m.Receiver
	}
	return ""
}

func receiverNote(r string) string {
	if r == "" {
		return ""
	}
	return ", receiver " + r
}
