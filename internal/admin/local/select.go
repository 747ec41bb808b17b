package local

import (
	"context"
	"fmt"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// selection walks the targets a selection names, a batch at a time, each
// batch read in a view of its own before it is applied, in id (or name)
// order up to the selection's Last. The first batch is read at once, so a
// malformed filter refuses the action before anything changed.
func (s *Service) selection(ctx context.Context, p admin.ActParams) (func() ([]string, bool, error), error) {
	sel := p.Select
	switch {
	case p.Action.QueueAction() && (sel.Queues == nil || sel.Messages != nil):
		return nil, domain.Invalidf("%s selects queues: give a queue filter; nothing was changed", p.Action)
	case !p.Action.QueueAction() && (sel.Messages == nil || sel.Queues != nil):
		return nil, domain.Invalidf("%s selects messages: give a message filter; nothing was changed", p.Action)
	}
	if p.Action == admin.ActResend && !p.IncludeBlacklisted {
		// Blacklisted messages are poison: resending them is releasing
		// them, which takes asking for it.
		if b := sel.Messages.Blacklisted; b != nil && *b {
			return nil, domain.WithHint(domain.ErrInvalid,
				"the selection is of blacklisted messages, which message.resend leaves alone; nothing was changed",
				"release them with 'queuectl blacklist release --all', or resend with --include-blacklisted")
		}
		f, no := *sel.Messages, false
		f.Blacklisted = &no
		sel = &admin.Selection{Messages: &f, Last: sel.Last}
	}
	after, done := "", false
	read := func() ([]string, bool, error) {
		if done {
			return nil, true, nil
		}
		var batch []string
		more := false
		add := func(t string) error {
			switch {
			case sel.Last != "" && t > sel.Last:
				return admin.ErrStop
			case len(batch) == actBatch:
				more = true
				return admin.ErrStop
			}
			batch = append(batch, t)
			return nil
		}
		var err error
		if sel.Queues != nil {
			f := *sel.Queues
			f.After, f.Limit = after, 0
			err = s.Queues(ctx, f, func(q *domain.Queue) error {
				if !p.Action.Selects(q) {
					return nil
				}
				return add(q.Name)
			})
		} else {
			f := *sel.Messages
			f.After, f.Limit = after, 0
			err = s.Messages(ctx, f, func(m *domain.Message) error { return add(m.ID) })
		}
		if err != nil {
			return nil, false, err
		}
		done = !more
		if len(batch) > 0 {
			after = batch[len(batch)-1]
		}
		return batch, done, nil
	}
	first, last, err := read()
	if err != nil {
		return nil, fmt.Errorf("%w; nothing was changed", err)
	}
	pending := true
	return func() ([]string, bool, error) {
		if pending {
			pending = false
			return first, last, nil
		}
		return read()
	}, nil
}
