package store

import (
	"errors"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// ErrStop, returned by a walk function, ends the walk without an error.
var ErrStop = errors.New("stop walking")

// Match reports whether m passes every field of f except After and Limit,
// which are about position, not content. Stores that filter in memory use it,
// so that every store selects the same messages.
func (f *MessageFilter) Match(m *domain.Message) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, m.Status) {
		return false
	}
	if f.Key != "" && m.Key != f.Key {
		return false
	}
	if len(f.Queues) > 0 && !slices.Contains(f.Queues, m.Queue) {
		return false
	}
	if len(f.Receivers) > 0 && !matchReceiver(f.Receivers, m) {
		return false
	}
	if len(f.Senders) > 0 && !slices.Contains(f.Senders, m.Sender) {
		return false
	}
	if len(f.AppQueues) > 0 && !slices.Contains(f.AppQueues, m.AppQueue) {
		return false
	}
	if f.ErrorText != "" && !strings.Contains(strings.ToLower(m.Error), strings.ToLower(f.ErrorText)) {
		return false
	}
	if !f.CreatedBefore.IsZero() && !m.CreatedAt.Before(f.CreatedBefore) {
		return false
	}
	if !f.CreatedAfter.IsZero() && !m.CreatedAt.After(f.CreatedAfter) {
		return false
	}
	if f.Blacklisted != nil && m.Blacklisted != *f.Blacklisted {
		return false
	}
	if f.Stuck != nil && domain.CountsStuck(m) != *f.Stuck {
		return false
	}
	return true
}

// matchReceiver matches an outbound message by its receiver and an inbound
// one by any of the receivers named at send time.
func matchReceiver(want []string, m *domain.Message) bool {
	if m.Receiver != "" {
		return slices.Contains(want, m.Receiver)
	}
	for _, r := range m.Receivers {
		if slices.Contains(want, r) {
			return true
		}
	}
	return false
}
