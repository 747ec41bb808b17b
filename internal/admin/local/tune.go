package local

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// MaxParallel is the largest tuning value (§7).
const MaxParallel = 9999

// inboundSubs are EO_INBOUND_PARALLEL's subparameters, one per role.
var inboundSubs = []domain.Role{domain.RoleSender, domain.RoleCentral, domain.RoleReceiver}

// Tuning lists every inbound subparameter and every outbound value set (plus
// the default for all receivers), each with the queues that exist for it.
func (s *Service) Tuning(ctx context.Context) ([]admin.TuningEntry, error) {
	var out []admin.TuningEntry
	err := s.view(ctx, func(r store.Reader) error {
		set := map[[2]string]int{}
		if err := r.Params(func(p domain.Param) error {
			set[[2]string{p.Name, p.Sub}] = p.Value
			return nil
		}); err != nil {
			return err
		}
		entry := func(name, sub string) admin.TuningEntry {
			v, ok := set[[2]string{name, sub}]
			if !ok {
				v = 1
			}
			return admin.TuningEntry{Param: name, Sub: sub, Value: v, Set: ok, Queues: []string{}}
		}
		idx := map[[2]string]int{}
		for _, role := range inboundSubs {
			idx[[2]string{placement.ParamEOInbound, role.Subparameter()}] = len(out)
			out = append(out, entry(placement.ParamEOInbound, role.Subparameter()))
		}
		idx[[2]string{placement.ParamEOOutbound, ""}] = len(out)
		out = append(out, entry(placement.ParamEOOutbound, ""))
		for k := range set {
			if k[0] == placement.ParamEOOutbound && k[1] != "" {
				idx[k] = len(out)
				out = append(out, entry(k[0], k[1]))
			}
		}
		slices.SortStableFunc(out[len(inboundSubs)+1:], func(a, b admin.TuningEntry) int { return strings.Compare(a.Sub, b.Sub) })
		for i, e := range out {
			idx[[2]string{e.Param, e.Sub}] = i
		}
		// Each EO queue belongs to the value that named it.
		return r.Queues("", func(q *store.QueueRecord) error {
			if q.QoS != domain.EO {
				return nil
			}
			key := [2]string{placement.ParamEOOutbound, q.Receiver}
			if q.Stage == domain.Inbound {
				key = [2]string{placement.ParamEOInbound, roleSub(q.Name)}
			} else if _, own := set[key]; !own {
				key[1] = ""
			}
			if i, ok := idx[key]; ok {
				out[i].Queues = append(out[i].Queues, q.Name)
			}
			return nil
		})
	})
	return out, err
}

// roleSub tells the subparameter from an EO inbound queue's role letter.
func roleSub(queue string) string {
	for _, role := range inboundSubs {
		if strings.HasPrefix(queue, "XBT"+role.Letter()) {
			return role.Subparameter()
		}
	}
	return ""
}

// Tune sets a tuning value (value ≥ 1) or unsets it (value 0), with its
// audit entry in the same transaction. Invalid input changes nothing.
func (s *Service) Tune(ctx context.Context, param, sub string, value int) (*admin.TuningEntry, error) {
	s = s.as(ctx)
	action := "tune.set"
	if value == 0 {
		action = "tune.unset"
	}
	target := []string{param + "/" + sub}
	if err := checkTuning(param, sub, value); err != nil {
		s.audit(ctx, action, target, domain.AuditError, err.Error())
		return nil, err
	}
	err := s.st.Update(ctx, func(w store.Writer) error {
		var err error
		if value == 0 {
			err = w.UnsetParam(param, sub)
		} else {
			err = w.SetParam(domain.Param{Name: param, Sub: sub, Value: value})
		}
		if err != nil {
			return err
		}
		return appendAudit(w, &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
			Action: action, Targets: target, Result: domain.AuditOK, Detail: fmt.Sprintf("value %d", value)})
	})
	if err != nil {
		return nil, err
	}
	entries, err := s.Tuning(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Param == param && (e.Sub == sub || (value == 0 && e.Sub == "")) {
			return &e, nil
		}
	}
	return &admin.TuningEntry{Param: param, Sub: sub, Value: 1, Queues: []string{}}, nil
}

// checkTuning applies the rules of §7.
func checkTuning(param, sub string, value int) error {
	switch param {
	case placement.ParamEOInbound:
		if !slices.ContainsFunc(inboundSubs, func(r domain.Role) bool { return r.Subparameter() == sub }) {
			return domain.Invalidf("%s needs --sub SENDER, CENTRAL or RECEIVER (the node role it applies to), not %q", param, sub)
		}
	case placement.ParamEOOutbound:
		if sub != "" {
			if err := domain.ValidateParty("--sub (a receiver name)", sub); err != nil {
				return err
			}
		}
	default:
		hint := ""
		if u := strings.ToUpper(param); u == placement.ParamEOInbound || u == placement.ParamEOOutbound {
			hint = fmt.Sprintf(" (did you mean %s?)", u)
		}
		return domain.Invalidf("parameter %q is not one of %s, %s%s", param, placement.ParamEOInbound, placement.ParamEOOutbound, hint)
	}
	if value < 0 || value > MaxParallel {
		return domain.Invalidf("value %d for %s must be from 1 to %d", value, param, MaxParallel)
	}
	return nil
}

// Audit lists audit entries.
func (s *Service) Audit(ctx context.Context, f admin.AuditFilter, fn func(*domain.AuditEntry) error) error {
	return s.view(ctx, func(r store.Reader) error {
		return r.Audit(store.AuditFilter{Since: f.Since, Actor: f.Actor, AfterSeq: f.AfterSeq, Limit: f.Limit}, func(e *domain.AuditEntry) error {
			if e.Targets == nil {
				e.Targets = []string{} // a list, [] in JSON, as every list of §5
			}
			return fn(e)
		})
	})
}

// Purge deletes DLVD and FAIL messages last changed before their cutoffs,
// with an audit entry per batch; NDLV, WAIT, HOLD, TBDL, DLNG and PEND are
// never purged.
func (s *Service) Purge(ctx context.Context, p admin.PurgeParams) (*admin.PurgeResult, error) {
	s = s.as(ctx)
	res := &admin.PurgeResult{Counts: map[domain.Status]int{}, DryRun: p.DryRun}
	for _, c := range []struct {
		status domain.Status
		cutoff time.Time
	}{{domain.StatusDLVD, p.DeliveredBefore}, {domain.StatusFAIL, p.FailedBefore}} {
		cutoff := c.cutoff
		if cutoff.IsZero() {
			continue
		}
		n, err := store.Purge(ctx, s.st, c.status, cutoff, p.DryRun, func(w store.Writer, ids []string) error {
			return appendAudit(w, &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
				Action: "purge", Targets: ids, Result: domain.AuditOK,
				Detail: fmt.Sprintf("%d %s messages last changed before %s", len(ids), c.status, cutoff.Format(time.RFC3339))})
		})
		res.Counts[c.status] = n
		if err != nil {
			return res, err
		}
	}
	return res, nil
}
