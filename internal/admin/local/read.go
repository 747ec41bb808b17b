package local

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Queues walks the queue records in name order and summarises each. The cost
// is O(queues): counts come from the per-queue counters, the head from the
// open-message index.
func (s *Service) Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	if f.Name != "" {
		if _, err := matchName(f.Name, ""); err != nil {
			return domain.Invalidf("queue name pattern %q is malformed: %v", f.Name, err)
		}
	}
	d, err := s.deliverers(ctx)
	if err != nil {
		return err
	}
	n := 0
	return s.view(ctx, func(r store.Reader) error {
		return r.Queues(f.After, func(rec *store.QueueRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !preMatch(&f, rec) {
				return nil
			}
			q, err := summarise(r, rec, d)
			if err != nil {
				return err
			}
			if len(f.States) > 0 && !slices.Contains(f.States, q.State) {
				return nil
			}
			if err := stopAs(fn(q)); err != nil {
				return err
			}
			if n++; f.Limit > 0 && n >= f.Limit {
				return store.ErrStop
			}
			return nil
		})
	})
}

// preMatch applies the filters that need only the record.
func preMatch(f *admin.QueueFilter, rec *store.QueueRecord) bool {
	if len(f.QoS) > 0 && !slices.Contains(f.QoS, rec.QoS) {
		return false
	}
	if len(f.Stages) > 0 && !slices.Contains(f.Stages, rec.Stage) {
		return false
	}
	if len(f.Receivers) > 0 && !slices.Contains(f.Receivers, rec.Receiver) {
		return false
	}
	if f.Name != "" {
		if ok, _ := matchName(f.Name, rec.Name); !ok {
			return false
		}
	}
	return true
}

// matchName matches a queue name against a shell pattern. EOIO queue names
// may hold a '/' (XBQISAP/ORDERS), which path.Match would not let '*' or '?'
// cross; '/' is swapped for '|', which no queue name holds, on both sides.
func matchName(pattern, name string) (bool, error) {
	slash := strings.NewReplacer("/", "|")
	return path.Match(slash.Replace(pattern), slash.Replace(name))
}

// Queue returns one queue's summary.
func (s *Service) Queue(ctx context.Context, name string) (*domain.Queue, error) {
	d, err := s.deliverers(ctx)
	if err != nil {
		return nil, err
	}
	var q *domain.Queue
	err = s.view(ctx, func(r store.Reader) error {
		rec, err := r.Queue(name)
		if errors.Is(err, domain.ErrNotFound) {
			return noQueue(r, name, err)
		}
		if err != nil {
			return err
		}
		q, err = summarise(r, rec, d)
		return err
	})
	return q, err
}

// maxSuggestQueues bounds how many queue names a not-found lookup reads for
// a suggestion.
const maxSuggestQueues = 100000

// noQueue is the not-found error of a queue name, with the name it most
// likely meant: queue names are uppercase, so xbqod367invoices_fr means
// XBQOD367INVOICES_FR.
func noQueue(r store.Reader, name string, notFound error) error {
	var names []string
	err := r.Queues("", func(rec *store.QueueRecord) error {
		names = append(names, rec.Name)
		if len(names) == maxSuggestQueues {
			return store.ErrStop
		}
		return nil
	})
	if err != nil {
		return notFound
	}
	hint := "queuectl queue list lists the queues; --name 'XBQ*' finds them by name"
	if s := domain.Suggest(name, names); s != "" {
		if strings.EqualFold(s, name) {
			hint = "queue names are uppercase"
		}
		return domain.WithHint(domain.ErrNotFound, fmt.Sprintf("queue %s does not exist (did you mean %s?)", name, s), hint)
	}
	return domain.WithHint(domain.ErrNotFound, notFound.Error(), hint)
}

// summarise derives what `queue list` shows from a queue record: the state
// and BEHIND from the counters and the head, which is read only when some
// open message still holds the queue up (not every one is passed over),
// and whether a node delivers to its receiver (d). The first open message,
// whose age the list shows, is read first: it is the head, unless the
// counters say that a message of higher rank is (domain.HeadPriority), so
// a queue's messages are looked up once, not twice.
func summarise(r store.Reader, rec *store.QueueRecord, d deliverers) (*domain.Queue, error) {
	counts := make(map[domain.Status]int64, len(rec.Counts))
	for st, n := range rec.Counts {
		if n != 0 {
			counts[st] = n
		}
	}
	q := &domain.Queue{
		Name: rec.Name, QoS: rec.QoS, Stage: rec.Stage, Receiver: rec.Receiver,
		Counts: counts, Depth: domain.Depth(counts), Stopped: rec.Stopped, Stuck: rec.Stuck, Owner: rec.Owner,
	}
	oldest, err := firstOpen(r, rec.Name)
	if err != nil {
		return nil, err
	}
	var head *domain.Message
	if q.Depth > rec.PassedOver {
		if oldest != nil && domain.HeadPriority(oldest.QoS, oldest.Status, oldest.ErrorClass) == rec.HeadRank() {
			head = oldest
		} else if head, err = r.Head(rec.Name); err != nil {
			return nil, err
		}
	}
	if head != nil {
		q.Head = domain.HeadOf(head)
	}
	unconfigured := rec.Stage == domain.Outbound && !d.configured(rec.Receiver)
	q.State = domain.StateOf(rec.Stopped, q.Depth, q.Head, rec.QoS, unconfigured)
	behind := domain.Behind(q.Depth, rec.PassedOver, q.Head, rec.QoS)
	q.Behind = &behind
	if q.State == domain.QueueBlocked {
		since := head.UpdatedAt
		q.BlockedSince = &since
	}
	if oldest != nil {
		at := oldest.CreatedAt
		q.OldestAt = &at
		if q.Head == nil {
			// Nothing holds the queue up (ERROR): the first of the messages
			// passed over, which wait for an operator, stands as its head.
			q.Head = domain.HeadOf(oldest)
		}
	}
	return q, nil
}

func firstOpen(r store.Reader, queue string) (*domain.Message, error) {
	var first *domain.Message
	err := r.QueueMessages(queue, store.QueueMessagesParams{Open: true, Limit: 1}, func(m *domain.Message) error {
		first = m
		return store.ErrStop
	})
	return first, err
}

// QueueMessages lists a queue's messages in seq order.
func (s *Service) QueueMessages(ctx context.Context, name string, p admin.QueueMessagesParams, fn func(*domain.Message) error) error {
	return s.view(ctx, func(r store.Reader) error {
		if _, err := r.Queue(name); err != nil {
			return err
		}
		return r.QueueMessages(name, store.QueueMessagesParams{Open: !p.All, AfterSeq: p.AfterSeq, Limit: p.Limit},
			func(m *domain.Message) error { return stopAs(fn(m)) })
	})
}

// Messages lists messages matching f in id order.
func (s *Service) Messages(ctx context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	if err := domain.ValidateKey(f.Key); err != nil {
		return err
	}
	if f.After != "" {
		var err error
		if f.After, err = messageID(f.After); err != nil {
			return err
		}
	}
	sf := store.MessageFilter{
		Statuses: f.Statuses, Queues: f.Queues, Receivers: f.Receivers, Senders: f.Senders,
		AppQueues: f.AppQueues, ErrorText: f.ErrorText, CreatedBefore: f.OlderThan,
		CreatedAfter: f.NewerThan, Blacklisted: f.Blacklisted, Stuck: f.Stuck, Key: f.Key, After: f.After, Limit: f.Limit,
		Reverse: f.NewestFirst,
	}
	return s.view(ctx, func(r store.Reader) error {
		return r.Messages(sf, func(m *domain.Message) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return stopAs(fn(m))
		})
	})
}

// Message returns one message with its history.
func (s *Service) Message(ctx context.Context, id string) (*domain.Message, error) {
	id, err := messageID(id)
	if err != nil {
		return nil, err
	}
	var m *domain.Message
	err = s.view(ctx, func(r store.Reader) error {
		var err error
		if m, err = r.Message(id); err != nil {
			return err
		}
		if m.PayloadVersion, err = r.PayloadVersions(id); err != nil {
			return err
		}
		m.History, err = r.History(id)
		return err
	})
	return m, err
}

// Payload returns a message's payload.
func (s *Service) Payload(ctx context.Context, id string) ([]byte, error) {
	id, err := messageID(id)
	if err != nil {
		return nil, err
	}
	var p []byte
	err = s.view(ctx, func(r store.Reader) error {
		var err error
		p, err = r.Payload(id)
		return err
	})
	return p, err
}

// messageID checks an id given by a user and returns it in the lowercase
// form ids are stored in, so that an id pasted in uppercase finds its message.
func messageID(id string) (string, error) {
	if err := domain.ValidID(id); err != nil {
		return "", err
	}
	return strings.ToLower(id), nil
}

// stopAs passes a walk function's error on to the store's walk, with
// admin.ErrStop, which ends the caller's walk, as the store's own ErrStop.
func stopAs(err error) error {
	if errors.Is(err, admin.ErrStop) {
		return store.ErrStop
	}
	return err
}
