package store

import (
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// CrashVerdict is what crash recovery does to one message a dead
// incarnation left DLNG (§4).
type CrashVerdict struct {
	// To is TBDL (a blacklist candidate, delivered alone next) or NDLV
	// (blacklisted).
	To domain.Status
	// Update sets crashes, blacklisting, error and node.
	Update func(*domain.Message)
	// Reason is the history entry's reason.
	Reason string
}

// CrashVerdictOf applies the crash counting rule of §4 to m, one of the
// inFlight messages the dead incarnation had DLNG: crashes += 1, and at the
// threshold NDLV and blacklisted — but only when m was the one delivery in
// flight, since otherwise any of them may have been the culprit. A message
// with crashes ≥ 1 is delivered alone, so for a threshold ≥ 2 the threshold
// crash always finds it alone; and no innocent message is ever blacklisted.
// Every store's recovery applies it, so the rule lives in one place.
func CrashVerdictOf(m *domain.Message, inFlight int, p RecoverParams) CrashVerdict {
	crashes := m.Crashes + 1
	dead := m.Node
	if dead == "" {
		dead = "unknown"
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
	}
}

// EngineEntry is a history entry the engine of node writes.
func EngineEntry(at time.Time, node Node, reason string) domain.HistoryEntry {
	return domain.HistoryEntry{At: at, Node: node.ID, Actor: "engine", Reason: reason}
}
