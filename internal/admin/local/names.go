package local

import (
	"context"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// Names lists the names of one kind that start with p.Prefix and sort
// after p.After, in order, at most p.Limit: for shell completion.
func (s *Service) Names(ctx context.Context, p admin.NamesParams) ([]string, error) {
	if p.Limit <= 0 {
		p.Limit = admin.DefaultNames
	}
	var all []string
	switch p.Kind {
	case admin.NameQueue:
		return s.queueNames(ctx, p)
	case admin.NameReceiver:
		var err error
		if all, err = s.receiverNames(ctx); err != nil {
			return nil, err
		}
	case admin.NameStatus:
		for _, st := range domain.Statuses {
			all = append(all, string(st))
		}
	case admin.NameState:
		for _, st := range domain.QueueStates {
			all = append(all, string(st))
		}
	case admin.NameParam:
		all = []string{placement.ParamEOInbound, placement.ParamEOOutbound}
	case admin.NameSub:
		switch p.Param {
		case placement.ParamEOInbound:
			for _, r := range inboundSubs {
				all = append(all, r.Subparameter())
			}
		case placement.ParamEOOutbound:
			// The configured receivers, and any set before one was removed.
			all = slices.Clone(s.opts.Receivers)
			err := s.view(ctx, func(r store.Reader) error {
				return r.Params(func(v domain.Param) error {
					if v.Name == p.Param && v.Sub != "" {
						all = append(all, v.Sub)
					}
					return nil
				})
			})
			if err != nil {
				return nil, err
			}
		}
	default:
		return nil, domain.Invalidf("name kind %q is not one of queue, receiver, status, state, param, sub", p.Kind)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	out := []string{}
	for _, n := range all {
		if strings.HasPrefix(n, p.Prefix) && n > p.After && len(out) < p.Limit {
			out = append(out, n)
		}
	}
	return out, nil
}

// queueNames walks the queues from the first name with the prefix on.
func (s *Service) queueNames(ctx context.Context, p admin.NamesParams) ([]string, error) {
	out := []string{}
	from := before(p.Prefix)
	if p.After > from {
		from = p.After
	}
	err := s.view(ctx, func(r store.Reader) error {
		return r.Queues(from, func(q *store.QueueRecord) error {
			switch {
			case q.Name < p.Prefix || q.Name <= p.After:
				return nil // from the walk's start up to the prefix
			case !strings.HasPrefix(q.Name, p.Prefix) || len(out) == p.Limit:
				return store.ErrStop
			}
			out = append(out, q.Name)
			return nil
		})
	})
	return out, err
}

// before returns a name that sorts before every name with the prefix, near
// them, for a walk that starts after it: the prefix with its last character
// one lower (queue names are ASCII; the walk skips what lies in between).
func before(prefix string) string {
	if prefix == "" {
		return ""
	}
	last := prefix[len(prefix)-1]
	if last == 0 || last >= 0x80 {
		return ""
	}
	return prefix[:len(prefix)-1] + string(rune(last-1))
}

// receiverNames are the configured receivers and those that outbound queues
// deliver to.
func (s *Service) receiverNames(ctx context.Context) ([]string, error) {
	all := slices.Clone(s.opts.Receivers)
	err := s.view(ctx, func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			if q.Receiver != "" {
				all = append(all, q.Receiver)
			}
			return nil
		})
	})
	return all, err
}
