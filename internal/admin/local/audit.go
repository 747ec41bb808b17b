package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// auditWindow is how many audit seqs one step of a newest-first walk reads.
const auditWindow = 256

// Audit lists the audit entries f selects, newest first unless
// f.OldestFirst, starting after the cursor f.After in that order. The store
// walks its log oldest first; newest first is read in windows of seqs from
// the end back, so a first page costs a window, not the whole log.
func (s *Service) Audit(ctx context.Context, f admin.AuditFilter, fn func(*domain.AuditEntry) error) error {
	switch f.Result {
	case "", domain.AuditOK, domain.AuditConflict, domain.AuditDenied, domain.AuditError:
	default:
		return domain.Invalidf("audit result %q is not one of ok, conflict, denied, error", f.Result)
	}
	n := 0
	emit := func(e *domain.AuditEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !auditMatch(f, e) {
			return nil
		}
		if e.Targets == nil {
			e.Targets = []string{} // a list, [] in JSON, as every list of §5
		}
		if err := stopAs(fn(e)); err != nil {
			return err
		}
		if n++; f.Limit > 0 && n >= f.Limit {
			return store.ErrStop
		}
		return nil
	}
	return s.view(ctx, func(r store.Reader) error {
		if f.OldestFirst {
			return r.Audit(store.AuditFilter{Since: f.Since, Actor: f.Actor, AfterSeq: f.After}, emit)
		}
		return auditNewestFirst(r, f, emit)
	})
}

// auditMatch applies the filters the store does not.
func auditMatch(f admin.AuditFilter, e *domain.AuditEntry) bool {
	return (f.Action == "" || e.Action == f.Action) && (f.Result == "" || e.Result == f.Result) &&
		(f.Actor == "" || e.Actor == f.Actor) && (f.Since.IsZero() || !e.At.Before(f.Since))
}

// auditNewestFirst walks the log from its newest entry (or from before the
// cursor) back, a window of seqs at a time. Entries are appended in time
// order, so the walk ends at the first entry older than f.Since.
func auditNewestFirst(r store.Reader, f admin.AuditFilter, emit func(*domain.AuditEntry) error) error {
	first, err := nextAuditSeq(r, 0)
	if err != nil || first == 0 {
		return err
	}
	hi := f.After - 1
	if f.After == 0 {
		if hi, err = lastAuditSeq(r, first); err != nil {
			return err
		}
	}
	for hi >= first && hi != 0 {
		from := max(first, hi-min(hi, auditWindow-1))
		var win []*domain.AuditEntry
		err := r.Audit(store.AuditFilter{AfterSeq: from - 1}, func(e *domain.AuditEntry) error {
			if e.Seq > hi {
				return store.ErrStop
			}
			win = append(win, e)
			return nil
		})
		if err != nil {
			return err
		}
		for i := len(win) - 1; i >= 0; i-- {
			if !f.Since.IsZero() && win[i].At.Before(f.Since) {
				return nil
			}
			if err := emit(win[i]); errors.Is(err, store.ErrStop) {
				return nil
			} else if err != nil {
				return err
			}
		}
		hi = from - 1
	}
	return nil
}

// nextAuditSeq returns the seq of the first entry after seq after, 0 when
// there is none.
func nextAuditSeq(r store.Reader, after uint64) (uint64, error) {
	var seq uint64
	err := r.Audit(store.AuditFilter{AfterSeq: after, Limit: 1}, func(e *domain.AuditEntry) error {
		seq = e.Seq
		return store.ErrStop
	})
	return seq, err
}

// lastAuditSeq finds the newest entry's seq from an existing one, in
// O(log n) probes: doubling steps past it, then halving the gap.
func lastAuditSeq(r store.Reader, known uint64) (uint64, error) {
	lo, up := known, known // lo exists; no entry comes after up
	for step := uint64(1); ; step *= 2 {
		next, err := nextAuditSeq(r, lo+step)
		if err != nil {
			return 0, err
		}
		if next == 0 {
			up = lo + step
			break
		}
		lo = next
	}
	for lo < up {
		mid := lo + (up-lo+1)/2 // lo < mid <= up
		next, err := nextAuditSeq(r, mid-1)
		if err != nil {
			return 0, err
		}
		if next == 0 {
			up = mid - 1
		} else {
			lo = next
		}
	}
	return lo, nil
}

// RecordAudit appends an audit entry in a transaction of its own: a request
// refused before it reached the service (§6: refusals are audited too).
func (s *Service) RecordAudit(ctx context.Context, e *domain.AuditEntry) error {
	return s.st.Update(ctx, func(w store.Writer) error { return appendAudit(w, e) })
}

// refused records a request the service refused before it changed
// anything, and returns the refusal: with a note when even the audit entry
// could not be written, so that the operator learns the log lacks it.
func (s *Service) refused(ctx context.Context, action string, targets []string, result string, cause error) error {
	if err := s.audit(ctx, action, targets, result, cause.Error()); err != nil {
		return fmt.Errorf("%w (recording this refusal in the audit log failed: %v)", cause, err)
	}
	return cause
}

// audit writes one audit entry in a transaction of its own (for requests
// that changed nothing, so there is no other transaction to share).
func (s *Service) audit(ctx context.Context, action string, targets []string, result, detail string) error {
	if len(targets) > actBatch {
		targets = targets[:actBatch]
	}
	// A refusal is recorded even when the request's own context ended.
	return s.st.Update(context.WithoutCancel(ctx), func(w store.Writer) error {
		return appendAudit(w, &domain.AuditEntry{
			At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: action,
			Targets: targets, Result: result, Detail: detail,
		})
	})
}
