package engine

import (
	"context"
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// recoverCrashed handles the messages a dead process left DLNG (§4): each
// gets crashes += 1 and goes back to TBDL at the head of its queue as a
// blacklist candidate, or — at engine.blacklisting.crashes — becomes NDLV
// and blacklisted, so one poison message can take down at most that many
// processes. Only messages that really were DLNG are touched. With the
// embedded store one process holds the file, so every DLNG message found at
// start belonged to a process that died.
//
// A crash is blamed on a message only when it was the one delivery in flight
// on the node that died: otherwise any of them may be the culprit, so none
// is blacklisted and each goes back as a candidate, to be delivered alone.
// With the default threshold of 2 that is how the second crash is always
// blamed; it also keeps a threshold of 1 from blacklisting bystanders.
func (e *Engine) recoverCrashed(ctx context.Context) error {
	bl := e.cfg.Engine.Blacklisting
	var recovered, blacklisted []*domain.Message
	err := e.st.Update(ctx, func(w store.Writer) error {
		recovered, blacklisted = nil, nil
		var dlng []*domain.Message
		err := w.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}, func(m *domain.Message) error {
			dlng = append(dlng, m)
			return nil
		})
		if err != nil {
			return err
		}
		inFlight := map[string]int{} // per dead node
		for _, m := range dlng {
			inFlight[m.Node]++
		}
		now := e.now()
		for _, m := range dlng {
			crashes := m.Crashes + 1
			dead := m.Node
			if dead == "" {
				dead = "unknown"
			}
			if bl.Enabled && crashes >= bl.Crashes && inFlight[m.Node] == 1 {
				times := "times"
				if crashes == 1 {
					times = "time"
				}
				msg := fmt.Sprintf("blacklisted: the engine process died %d %s while delivering it (last: node %s)", crashes, times, dead)
				after, err := w.Transition(store.TransitionParams{
					ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusNDLV,
					Update: func(m *domain.Message) {
						m.Crashes, m.Blacklisted, m.Node = crashes, true, dead // the node it took down last
						m.Error, m.ErrorClass = msg, domain.ErrorCrash
					},
					History: e.history(now, msg),
				})
				if err != nil {
					return err
				}
				if err := store.RestoreHold(w, after.Queue, e.history(now, "held behind blacklisted "+after.ID)); err != nil {
					return err
				}
				blacklisted = append(blacklisted, after)
				continue
			}
			reason := fmt.Sprintf("crash recovery: node %s died while delivering it (crash %d)", dead, crashes)
			if bl.Enabled {
				reason += fmt.Sprintf(" of %d allowed; it is delivered alone next", bl.Crashes)
			}
			after, err := w.Transition(store.TransitionParams{
				ID: m.ID, From: []domain.Status{domain.StatusDLNG}, To: domain.StatusTBDL,
				Update: func(m *domain.Message) {
					m.Crashes, m.Node = crashes, ""
					m.Error, m.ErrorClass = "the engine process died while delivering it", domain.ErrorCrash
				},
				History: e.history(now, reason),
			})
			if err != nil {
				return err
			}
			recovered = append(recovered, after)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(recovered)+len(blacklisted) > 0 {
		e.log.Warn("crash recovery", "node", e.node, "returned_to_tbdl", len(recovered), "blacklisted", len(blacklisted))
	}
	for _, m := range recovered {
		e.emit(EventRequeued, m)
	}
	for _, m := range blacklisted {
		e.log.Warn("message blacklisted", "message", m.ID, "queue", m.Queue, "crashes", m.Crashes)
		e.emit(EventBlacklisted, m)
	}
	e.emit(EventRecovered, nil)
	return nil
}
