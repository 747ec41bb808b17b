package store

import (
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// CrashVerdict is what crash recovery does to one message a dead
// incarnation left DLNG (§4), or a hand back to one a node let go of.
type CrashVerdict struct {
	// To is TBDL (a blacklist candidate, delivered alone next, or a
	// message handed back) or NDLV (blacklisted).
	To domain.Status
	// Update sets crashes, blacklisting, error and node.
	Update func(*domain.Message)
	// Reason is the history entry's reason.
	Reason string
	// Crash says the verdict counted a crash: crashes += 1.
	Crash bool
}

// CrashVerdictOf applies the crash counting rule of §4 to m, one of the
// inFlight messages the dead incarnation had DLNG: crashes += 1, and at the
// threshold NDLV and blacklisted — but only when m was the one delivery in
// flight, since otherwise any of them may have been the culprit. A message
// with crashes ≥ 1 is delivered alone, so for a threshold ≥ 2 the threshold
// crash always finds it alone; and no innocent message is ever blacklisted.
// Every store's recovery applies it, so the rule lives in one place.
//
// A recovery that counts no crash (§4: the dead incarnation lost its lease
// in an outage, not its process — counted is false) hands the message back
// instead, its crashes as they were.
func CrashVerdictOf(m *domain.Message, inFlight int, p RecoverParams, counted bool) CrashVerdict {
	crashes := m.Crashes + 1
	dead := m.Node
	if dead == "" {
		dead = "unknown"
	}
	if !counted {
		return CrashVerdict{
			To: domain.StatusTBDL,
			Update: func(m *domain.Message) {
				m.Node, m.Incarnation = "", 0
			},
			Reason: fmt.Sprintf("recovered: node %s lost its lease in a database outage while delivering it; "+
				"not counted as a crash", dead),
		}
	}
	if p.Blacklisting && crashes >= p.Crashes && inFlight == 1 {
		times := "times"
		if crashes == 1 {
			times = "time"
		}
		msg := fmt.Sprintf("blacklisted: the engine process died %d %s while delivering it (last: node %s)", crashes, times, dead)
		return CrashVerdict{
			To: domain.StatusNDLV,
			Update: func(m *domain.Message) {
				m.Crashes, m.Blacklisted, m.Node, m.Incarnation = crashes, true, dead, 0 // the node it took down last
				m.Error, m.ErrorClass = msg, domain.ErrorCrash
			},
			Reason: msg,
			Crash:  true,
		}
	}
	reason := fmt.Sprintf("crash recovery: node %s died while delivering it (crash %d)", dead, crashes)
	if p.Blacklisting {
		reason += fmt.Sprintf(" of %d allowed; it is delivered alone next", p.Crashes)
	}
	return CrashVerdict{
		To: domain.StatusTBDL,
		Update: func(m *domain.Message) {
			m.Crashes, m.Node, m.Incarnation = crashes, "", 0
			m.Error, m.ErrorClass = "the engine process died while delivering it", domain.ErrorCrash
		},
		Reason: reason,
		Crash:  true,
	}
}

// EngineEntry is a history entry the engine of node writes.
func EngineEntry(at time.Time, node Node, reason string) domain.HistoryEntry {
	return domain.HistoryEntry{At: at, Node: node.ID, Actor: "engine", Reason: reason}
}

// HandBack is the verdict on a message a live node lets go of without
// having called its receiver — at a clean stop, or a claim whose commit it
// could not confirm: TBDL, and the attempt the claim counted is taken back.
func HandBack(reason string) CrashVerdict {
	return CrashVerdict{
		To: domain.StatusTBDL,
		Update: func(m *domain.Message) {
			m.Node, m.Incarnation = "", 0
			m.Attempts = max(0, m.Attempts-1)
		},
		Reason: reason,
	}
}

// Settled is what Settle did to one message.
type Settled struct {
	Verdict CrashVerdict
	// Message is the message as stored after.
	Message *domain.Message
}

// Settle applies a verdict to each of msgs, messages that a node held DLNG,
// in w: each goes where its verdict says; one that goes NDLV leaves for its
// error queue when §10 says so; and the HOLD rule is restored in its queue.
// Crash recovery, a clean stop and a reconciliation all end this way, on
// both stores. A store that locks queues must have locked theirs.
func Settle(w Writer, msgs []*domain.Message, verdict func(*domain.Message) CrashVerdict, at time.Time,
	node Node) ([]Settled, error) {
	out := make([]Settled, 0, len(msgs))
	for _, m := range msgs {
		v := verdict(m)
		after, err := w.Transition(TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: v.To,
			Update: v.Update, History: EngineEntry(at, node, v.Reason)})
		if err != nil {
			return nil, err
		}
		hold, queue := "", after.Queue
		if v.To == domain.StatusNDLV {
			hold = "held behind blacklisted " + after.ID
			moved, err := Divert(w, after, EngineEntry(at, node, ""))
			if err != nil {
				return nil, err
			}
			if moved != "" {
				if after, err = w.Message(after.ID); err != nil {
					return nil, err
				}
			}
		}
		if err := RestoreHold(w, queue, EngineEntry(at, node, hold)); err != nil {
			return nil, err
		}
		out = append(out, Settled{Verdict: v, Message: after})
	}
	return out, nil
}

// Sort files each settled message under what became of it: blacklisted,
// requeued as a blacklist candidate, or handed back.
func (r *RecoverResult) Sort(settled []Settled) {
	for _, s := range settled {
		switch {
		case s.Verdict.To == domain.StatusNDLV:
			r.Blacklisted = append(r.Blacklisted, s.Message)
		case s.Verdict.Crash:
			r.Requeued = append(r.Requeued, s.Message)
		default:
			r.HandedBack = append(r.HandedBack, s.Message)
		}
	}
}
