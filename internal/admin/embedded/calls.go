package embedded

import (
	"context"
	"errors"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/domain"
)

// pageSize is how many items of a list one call reads.
const pageSize = 1000

// pages hands fn the items of a list a page at a time. Each page is read in
// a call of its own and handed to fn only once the store is let go, so that
// fn may block — on a full output pipe — without keeping anyone out of the
// store. read asks svc for at most n items from the cursor on; advance moves
// the cursor past an item. limit 0 is no limit.
func pages[T any](ctx context.Context, s *Service, limit int,
	read func(svc admin.Service, n int, add func(T) error) error, advance func(last T), fn func(T) error) error {
	n := 0
	for {
		size := pageSize
		if limit > 0 {
			size = min(size, limit-n)
		}
		var items []T
		err := s.do(ctx, func(svc admin.Service) error {
			items = items[:0]
			return read(svc, size, func(it T) error {
				items = append(items, it)
				return nil
			})
		})
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); errors.Is(err, admin.ErrStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
		n += len(items)
		if len(items) < size || (limit > 0 && n >= limit) {
			return nil
		}
		advance(items[len(items)-1])
	}
}

// Queues lists queues a page at a time.
func (s *Service) Queues(ctx context.Context, f admin.QueueFilter, fn func(*domain.Queue) error) error {
	return pages(ctx, s, f.Limit, func(svc admin.Service, n int, add func(*domain.Queue) error) error {
		p := f
		p.Limit = n
		return svc.Queues(ctx, p, add)
	}, func(q *domain.Queue) { f.After = q.Name }, fn)
}

// QueueMessages lists a queue's messages a page at a time.
func (s *Service) QueueMessages(ctx context.Context, name string, p admin.QueueMessagesParams, fn func(*domain.Message) error) error {
	return pages(ctx, s, p.Limit, func(svc admin.Service, n int, add func(*domain.Message) error) error {
		q := p
		q.Limit = n
		return svc.QueueMessages(ctx, name, q, add)
	}, func(m *domain.Message) { p.AfterSeq = m.Seq }, fn)
}

// Messages lists messages a page at a time.
func (s *Service) Messages(ctx context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	return pages(ctx, s, f.Limit, func(svc admin.Service, n int, add func(*domain.Message) error) error {
		p := f
		p.Limit = n
		return svc.Messages(ctx, p, add)
	}, func(m *domain.Message) { f.After = m.ID }, fn)
}

// Audit lists audit entries a page at a time.
func (s *Service) Audit(ctx context.Context, f admin.AuditFilter, fn func(*domain.AuditEntry) error) error {
	return pages(ctx, s, f.Limit, func(svc admin.Service, n int, add func(*domain.AuditEntry) error) error {
		p := f
		p.Limit = n
		return svc.Audit(ctx, p, add)
	}, func(e *domain.AuditEntry) { f.After = e.Seq }, fn)
}

// call runs one request and returns its answer.
func call[T any](ctx context.Context, s *Service, fn func(svc admin.Service) (T, error)) (T, error) {
	var out T
	err := s.do(ctx, func(svc admin.Service) error {
		var err error
		out, err = fn(svc)
		return err
	})
	return out, err
}

// Send stores the messages. Through a socket it is tried again only when
// nothing was sent: a send whose answer was lost may have stored messages,
// and sending them again would store them twice.
func (s *Service) Send(ctx context.Context, reqs []domain.SendRequest) ([]admin.Sent, error) {
	return call(ctx, s, func(svc admin.Service) ([]admin.Sent, error) {
		msgs, err := svc.Send(ctx, reqs)
		if errors.Is(err, remote.ErrNoAnswer) && (!errors.Is(err, remote.ErrNotSent) || len(msgs) > 0) {
			// Reported, not tried again: keep the text and hint, drop the kind that retries.
			err = domain.WithHint(domain.ErrUnavailable, err.Error(), domain.HintOf(err))
		}
		return msgs, err
	})
}

// Queue returns one queue.
func (s *Service) Queue(ctx context.Context, name string) (*domain.Queue, error) {
	return call(ctx, s, func(svc admin.Service) (*domain.Queue, error) { return svc.Queue(ctx, name) })
}

// Message returns one message with its history.
func (s *Service) Message(ctx context.Context, id string) (*domain.Message, error) {
	return call(ctx, s, func(svc admin.Service) (*domain.Message, error) { return svc.Message(ctx, id) })
}

// Payload returns a message's payload.
func (s *Service) Payload(ctx context.Context, id string) ([]byte, error) {
	return call(ctx, s, func(svc admin.Service) ([]byte, error) { return svc.Payload(ctx, id) })
}

// EditPayload stores a corrected payload. An edit names the version it
// replaces, so one tried again after a lost answer changes nothing twice.
func (s *Service) EditPayload(ctx context.Context, p admin.EditParams) (*admin.EditResult, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.EditResult, error) { return svc.EditPayload(ctx, p) })
}

// PayloadVersion returns one version of a message's payload.
func (s *Service) PayloadVersion(ctx context.Context, id string, n int) ([]byte, error) {
	return call(ctx, s, func(svc admin.Service) ([]byte, error) { return svc.PayloadVersion(ctx, id, n) })
}

// Act applies an action. A target changes by compare-and-set, so an action
// tried again after a lost answer changes nothing twice.
func (s *Service) Act(ctx context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.BulkResult, error) { return svc.Act(ctx, p) })
}

// Tuning lists the tuning values.
func (s *Service) Tuning(ctx context.Context) ([]admin.TuningEntry, error) {
	return call(ctx, s, func(svc admin.Service) ([]admin.TuningEntry, error) { return svc.Tuning(ctx) })
}

// Tune sets or unsets a tuning value.
func (s *Service) Tune(ctx context.Context, p admin.TuneParams) (*admin.TuningEntry, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.TuningEntry, error) { return svc.Tune(ctx, p) })
}

// Names lists names for shell completion.
func (s *Service) Names(ctx context.Context, p admin.NamesParams) ([]string, error) {
	return call(ctx, s, func(svc admin.Service) ([]string, error) { return svc.Names(ctx, p) })
}

// Purge deletes old final messages.
func (s *Service) Purge(ctx context.Context, p admin.PurgeParams) (*admin.PurgeResult, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.PurgeResult, error) { return svc.Purge(ctx, p) })
}

// RecordRefusal records a request the command refused itself.
func (s *Service) RecordRefusal(ctx context.Context, r admin.Refusal) error {
	return s.do(ctx, func(svc admin.Service) error { return svc.RecordRefusal(ctx, r) })
}

// Nodes lists the nodes serving the store: through the socket, the engine
// of the serving process; on the file itself, none.
func (s *Service) Nodes(ctx context.Context) ([]admin.Node, error) {
	return call(ctx, s, func(svc admin.Service) ([]admin.Node, error) { return svc.Nodes(ctx) })
}
