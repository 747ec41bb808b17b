package store

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// CountedCrash is the record a crash recovery keeps of one crash it
// counted against a dead incarnation (§4: a node that comes back did not
// die): if that incarnation's process joins again, the crash is taken back
// (TakeBack). Both stores keep one per message and dead incarnation, from
// the recovery's transaction until the take-back's, or until another
// incarnation of the node's id joins (its process died: the crashes stand).
type CountedCrash struct {
	// ID is the message's.
	ID string
	// Crash is the message's crashes after the recovery counted it.
	Crash int
	// At is the recovery's time, that of its history entry, to the
	// microsecond: an operator's entry at or after it means the operator
	// acted since.
	At time.Time
}

// CountedCrashes lists the crashes that a recovery's settled messages
// counted, for the store to keep.
func CountedCrashes(settled []Settled, at time.Time) []CountedCrash {
	var out []CountedCrash
	for _, s := range settled {
		if s.Verdict.Crash {
			out = append(out, CountedCrash{ID: s.Message.ID, Crash: s.Message.Crashes, At: at.UTC().Truncate(time.Microsecond)})
		}
	}
	return out
}

// TakeBack takes back, in w, the crashes a recovery counted against
// incarnation dead, whose process has come back (it was paused, not dead),
// and returns the messages it changed, as stored after. For each message
// that still has a crash and on which no operator acted since the recovery
// (a history entry at or after it by anyone but the engine): crashes -= 1;
// a message the recovery (or a later one) blacklisted returns to TBDL at
// the head of its queue, where the HOLD rule lets its successors follow,
// a blacklist candidate still if a crash is left; any other keeps its
// status. Each history says so. A message gone (purged) is passed over. A
// store that locks queues locks theirs first, in name order. by is the
// incarnation that takes them back (its history entries name it).
func TakeBack(w Writer, dead Node, crashes []CountedCrash, at time.Time, by Node) ([]*domain.Message, error) {
	if len(crashes) == 0 {
		return nil, nil
	}
	ids := make([]string, len(crashes))
	for i, c := range crashes {
		ids[i] = c.ID
	}
	if err := LockQueues(w, nil, ids); err != nil {
		return nil, err
	}
	// In queue order, then seq: the changes of one queue come together.
	type taking struct {
		c CountedCrash
		m *domain.Message
	}
	var todo []taking
	for _, c := range crashes {
		m, err := w.Message(c.ID)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		todo = append(todo, taking{c, m})
	}
	slices.SortFunc(todo, func(a, b taking) int {
		return cmp.Or(cmp.Compare(a.m.Queue, b.m.Queue), cmp.Compare(a.m.Seq, b.m.Seq))
	})
	var out []*domain.Message
	for _, tk := range todo {
		after, err := takeBack(w, dead, tk.c, tk.m, at, by)
		if err != nil {
			return nil, err
		}
		if after != nil {
			out = append(out, after)
		}
	}
	return out, nil
}

// takeBack takes back the crash c of message m (TakeBack); nil when it
// stands.
func takeBack(w Writer, dead Node, c CountedCrash, m *domain.Message, at time.Time, by Node) (*domain.Message, error) {
	if m.Crashes == 0 {
		return nil, nil // released since: nothing left to take back
	}
	history, err := w.History(m.ID)
	if err != nil {
		return nil, err
	}
	for _, h := range history {
		if h.Actor != "engine" && !h.At.Before(c.At) {
			return nil, nil // an operator acted since: their decision stands
		}
	}
	crashes := m.Crashes - 1
	reason := fmt.Sprintf("crash %d taken back: node %s was paused, not dead", c.Crash, dead.ID)
	candidate := func(m *domain.Message) {
		m.Crashes = crashes
		if crashes == 0 && m.ErrorClass == domain.ErrorCrash {
			m.Error, m.ErrorClass = "", ""
		}
	}
	if m.Status == domain.StatusNDLV && m.Blacklisted {
		after, err := w.Transition(TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusNDLV}, To: domain.StatusTBDL,
			Update: func(m *domain.Message) {
				m.Blacklisted, m.Node, m.Incarnation = false, "", 0
				m.Error, m.ErrorClass = "the engine process died while delivering it", domain.ErrorCrash
				candidate(m)
			},
			History: EngineEntry(at, by, reason+"; it is no longer blacklisted")})
		if err != nil {
			return nil, err
		}
		if err := RestoreHold(w, after.Queue, EngineEntry(at, by, "")); err != nil {
			return nil, err
		}
		return w.Message(after.ID)
	}
	return w.Transition(TransitionParams{ID: m.ID, From: []domain.Status{m.Status}, To: m.Status, Update: candidate,
		History: EngineEntry(at, by, reason)})
}
