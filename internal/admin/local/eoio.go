package local

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// actEOIOSwitch is the audit log's name of a switch.
const actEOIOSwitch = "eoio.switch"

// EOIOStatus reads the switch state and walks the EOIO queues.
func (s *Service) EOIOStatus(ctx context.Context) (*admin.EOIOStatus, error) {
	var st *admin.EOIOStatus
	err := s.view(ctx, func(r store.Reader) error {
		var err error
		st, err = eoioStatus(r)
		return err
	})
	return st, err
}

// eoioStatus derives the status from the switch state and the EOIO queues'
// counters: O(EOIO queues), never a message read.
func eoioStatus(r store.Reader) (*admin.EOIOStatus, error) {
	sw, err := r.EOIO()
	if err != nil {
		return nil, err
	}
	st := &admin.EOIOStatus{Current: sw.Current,
		Draining: admin.QueueGroup{Names: []string{}}, ErrorQueues: admin.QueueGroup{Names: []string{}}}
	if sw.Switched() {
		old, at := sw.Old, sw.At
		st.Old, st.SwitchedAt, st.SwitchedBy = &old, &at, sw.By
	}
	err = eoioQueues(r, func(q *store.QueueRecord) {
		depth := domain.Depth(q.Counts)
		if depth == 0 {
			return
		}
		if domain.ErrorQueue(q.Name) {
			st.ErrorQueues.Add(q.Name, depth)
		} else if set, ok := sw.SetOf(q.Name); ok && sw.Switched() && set.Prefix == sw.Old.Prefix {
			st.Draining.Add(q.Name, depth)
		}
	})
	switch {
	case st.Draining.Queues > 0:
		st.State = admin.EOIOStarted
	case sw.Current.Shared():
		st.State = admin.EOIOActive
	default:
		st.State = admin.EOIOInactive
	}
	return st, err
}

// eoioQueues calls fn for the EOIO queues: those named XB2… and XBQ…, which
// sort together before the EO queues (XBT…).
func eoioQueues(r store.Reader, fn func(*store.QueueRecord)) error {
	return r.Queues("XB", func(q *store.QueueRecord) error {
		if q.Name >= "XBR" {
			return store.ErrStop
		}
		if q.QoS == domain.EOIO {
			fn(q)
		}
		return nil
	})
}

// EOIOSwitch checks the number of queues, then switches in one transaction
// with its audit entry; a refusal is audited too.
func (s *Service) EOIOSwitch(ctx context.Context, p admin.EOIOSwitchParams) (*admin.EOIOStatus, error) {
	s = s.as(ctx)
	targets := []string{"queues=" + p.Queues}
	n, err := parseEOIOQueues(p.Queues)
	if err != nil {
		return nil, s.refused(ctx, actEOIOSwitch, targets, domain.AuditError, err)
	}
	var st *admin.EOIOStatus
	var refusal error
	err = s.st.Update(ctx, func(w store.Writer) error {
		refusal = nil
		e := &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
			Action: actEOIOSwitch, Targets: targets, Result: domain.AuditOK}
		// The switch's lock before the state it reads: two switches at
		// once take turns, neither waits for the other's shared hold.
		if err := store.LockSwitch(w); err != nil {
			return err
		}
		sw, err := w.EOIO()
		if err != nil {
			return err
		}
		before, err := eoioStatus(w)
		if err != nil {
			return err
		}
		if refusal = switchRefusal(sw, before, n); refusal != nil {
			e.Result, e.Detail = domain.AuditConflict, refusal.Error()
			return w.AppendAudit(e)
		}
		next := domain.EOIOSwitch{Current: domain.EOIOSet{Prefix: sw.Current.Prefix.Other(), Queues: n}, Old: sw.Current,
			At: s.opts.Now(), By: s.opts.Actor}
		if err := w.SetEOIO(next); err != nil {
			return err
		}
		e.Detail = fmt.Sprintf("from %s to %s", sw.Current, next.Current)
		if err := w.AppendAudit(e); err != nil {
			return err
		}
		st, err = eoioStatus(w)
		return err
	})
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, refusal
	}
	return st, nil
}

// parseEOIOQueues reads the number of queues per stage: 0 to 99.
func parseEOIOQueues(v string) (int, error) {
	n, ok := domain.ParseWholeNumber(v)
	if !ok || n > domain.MaxEOIOQueues {
		return 0, domain.FieldErr(domain.ErrInvalid, "", "queues",
			fmt.Sprintf(" %q must be a whole number from 0 to %d; nothing was changed", v, domain.MaxEOIOQueues),
			"1-99 hashes the app queues into that many queues per stage; 0 gives each app queue its own queue again")
	}
	return n, nil
}

// switchRefusal says why a switch to n queues cannot be made now, or nil.
func switchRefusal(sw domain.EOIOSwitch, st *admin.EOIOStatus, n int) error {
	if st.Draining.Queues > 0 {
		return domain.WithHint(domain.ErrConflict,
			fmt.Sprintf("the last switch is still under way: %s of the old set %s still %s %s (%s); nothing was changed",
				count(int64(st.Draining.Queues), "queue"), sw.Old.Prefix, holdVerb(st.Draining.Queues), count(st.Draining.Messages, "message"),
				strings.Join(st.Draining.Names, ", ")),
			"switch again once they have drained: 'queuectl eoio status' shows them")
	}
	if n == sw.Current.Queues {
		return domain.Conflictf("EOIO uses %s already; nothing was changed", sw.Current)
	}
	return nil
}

// count says how many of what there are: 1 queue, 2 queues.
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

func holdVerb(queues int) string {
	if queues == 1 {
		return "holds"
	}
	return "hold"
}
