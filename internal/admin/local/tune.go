package local

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

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

// Tune sets or unsets a tuning value, with its audit entry in the same
// transaction. A refusal changes nothing and is audited as an error;
// unsetting a value that is not set changes nothing, is audited as a
// conflict and is reported as not found.
func (s *Service) Tune(ctx context.Context, p admin.TuneParams) (*admin.TuningEntry, error) {
	s, p = s.as(ctx), p.Canonical()
	action := "tune.set"
	if p.Unset {
		action = "tune.unset"
	}
	target := []string{p.Param + "/" + p.Sub}
	value, err := s.checkTuning(ctx, p)
	if err != nil {
		return nil, s.refused(ctx, action, target, domain.AuditError, err)
	}
	var notSet error
	err = s.st.Update(ctx, func(w store.Writer) error {
		notSet = nil
		e := &domain.AuditEntry{At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source,
			Action: action, Targets: target, Result: domain.AuditOK}
		switch old, set, err := w.Param(p.Param, p.Sub); {
		case err != nil:
			return err
		case p.Unset && !set:
			notSet = s.notSet(w, p)
			e.Result, e.Detail = domain.AuditConflict, notSet.Error()
		case p.Unset:
			if err := w.UnsetParam(p.Param, p.Sub); err != nil {
				return err
			}
			e.Detail = fmt.Sprintf("value %d unset", old)
		default:
			if err := w.SetParam(domain.Param{Name: p.Param, Sub: p.Sub, Value: value}); err != nil {
				return err
			}
			e.Detail = fmt.Sprintf("value %d", value)
			if set {
				e.Detail += fmt.Sprintf(" (was %d)", old)
			}
		}
		return appendAudit(w, e)
	})
	if err != nil {
		return nil, err
	}
	if notSet != nil {
		return nil, notSet
	}
	entries, err := s.Tuning(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Param == p.Param && (e.Sub == p.Sub || (p.Unset && e.Sub == "")) {
			return &e, nil
		}
	}
	return &admin.TuningEntry{Param: p.Param, Sub: p.Sub, Value: 1, Queues: []string{}}, nil
}

// notSet explains an unset of a value that is not set, naming the values of
// the parameter that are.
func (s *Service) notSet(r store.Reader, p admin.TuneParams) error {
	var set []string
	err := r.Params(func(v domain.Param) error {
		if v.Name == p.Param {
			set = append(set, v.Sub)
		}
		return nil
	})
	const msg = " is not set; nothing to unset"
	if err == nil && slices.Contains(set, "") && p.Param == placement.ParamEOOutbound {
		set[slices.Index(set, "")] = "(all receivers)"
	}
	if err != nil || len(set) == 0 {
		return subError(domain.ErrNotFound, p.Param, p.Sub, msg, "no value of "+p.Param+" is set: the default, 1, applies")
	}
	return subError(domain.ErrNotFound, p.Param, p.Sub, msg+domain.DidYouMean(p.Sub, set),
		"the values set: "+strings.Join(set, ", ")+" (queuectl tune list)")
}

// subError is an error about param's subparameter sub ("PARAM sub SUB
// after"), which names the field sub as the API or the CLI (--sub) says
// it; about the parameter alone ("PARAM after") without one.
func subError(kind error, param, sub, after, hint string) error {
	if sub == "" {
		return domain.WithHint(kind, param+after, hint)
	}
	return domain.FieldErr(kind, param+" ", "sub", " "+sub+after, hint)
}

// checkTuning applies the rules of §7 and returns the value to set.
func (s *Service) checkTuning(ctx context.Context, p admin.TuneParams) (int, error) {
	param, sub := p.Param, p.Sub
	switch param {
	case placement.ParamEOInbound:
		subs := make([]string, len(inboundSubs))
		for i, r := range inboundSubs {
			subs[i] = r.Subparameter()
		}
		if !slices.Contains(subs, sub) {
			return 0, domain.FieldErr(domain.ErrInvalid, param+" needs ", "sub",
				fmt.Sprintf(" SENDER, CENTRAL or RECEIVER (the node role it applies to), not %q%s", sub, domain.DidYouMean(sub, subs)), "")
		}
	case placement.ParamEOOutbound:
		if sub != "" && !p.Unset && !slices.Contains(s.opts.Receivers, sub) {
			// Unsetting stays possible for a receiver removed from the
			// configuration, and a receiver that has a value already (set
			// where it is configured: another node's configuration, or the
			// demo's) can be given another.
			valued := s.valuedReceivers(ctx)
			if !slices.Contains(valued, sub) {
				return 0, s.unknownReceiver(sub, valued)
			}
		}
	default:
		return 0, domain.Invalidf("parameter %q is not one of %s, %s%s", param, placement.ParamEOInbound,
			placement.ParamEOOutbound, domain.DidYouMean(param, []string{placement.ParamEOInbound, placement.ParamEOOutbound}))
	}
	if p.Unset {
		if p.Value != "" {
			return 0, domain.Invalidf("unsetting %s takes no value, not %q", param, p.Value)
		}
		return 0, nil
	}
	return admin.ParseTuningValue(param, p.Value)
}

// valuedReceivers are the receivers with an EO_OUTBOUND_PARALLEL value of
// their own in the store.
func (s *Service) valuedReceivers(ctx context.Context) []string {
	var subs []string
	_ = s.st.View(ctx, func(r store.Reader) error {
		return r.Params(func(v domain.Param) error {
			if v.Name == placement.ParamEOOutbound && v.Sub != "" {
				subs = append(subs, v.Sub)
			}
			return nil
		})
	})
	return subs
}

// unknownReceiver refuses an EO_OUTBOUND_PARALLEL subparameter that names
// no configured receiver: a value for it would never apply.
func (s *Service) unknownReceiver(sub string, valued []string) error {
	known := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(s.opts.Receivers), valued...))))
	msg := fmt.Sprintf(": no receiver %s is configured%s; nothing was changed", sub, domain.DidYouMean(sub, known))
	var hint string
	switch {
	case len(s.opts.Receivers) > 0:
		hint = "configured receivers: " + strings.Join(s.opts.Receivers, ", ")
		if len(valued) > 0 {
			hint += "; with a value: " + strings.Join(valued, ", ")
		}
	case len(valued) > 0:
		hint = "receivers with a value: " + strings.Join(valued, ", ") + "; configure others under receivers: in the configuration"
	default:
		hint = "no receivers are configured: add them under receivers: in the configuration (queuectl config check)"
	}
	return subError(domain.ErrInvalid, placement.ParamEOOutbound, sub, msg, hint)
}
