package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// recoverDead runs crash recovery (§4) for incarnations that died with
// messages DLNG: at start for this node's earlier incarnations, and for
// the dead nodes a heartbeat finds. previous, if set, is this process's own
// earlier incarnation, which lost its lease but not its life: its messages
// go back to TBDL without counting a crash.
func (e *Engine) recoverDead(ctx context.Context, node store.Node, dead []store.Node, previous *store.Node) error {
	for _, d := range dead {
		sctx, cancel := e.storeContext(ctx)
		res, err := e.st.Recover(sctx, store.RecoverParams{
			Node: node, Dead: d, Blacklisting: e.cfg.Blacklisting.Enabled, Crashes: e.cfg.Blacklisting.Crashes,
			Outage: previous != nil && *previous == d,
		})
		cancel()
		if err != nil {
			return err
		}
		for _, m := range res.HandedBack {
			e.emit(Event{Kind: EventHandedBack, Message: m})
		}
		if len(res.TakenBack) > 0 {
			e.log.Warn("crashes taken back: this node was paused, not dead, when another node recovered its messages",
				"node", e.node, "incarnation", d.Incarnation, "messages", len(res.TakenBack))
			for _, m := range res.TakenBack {
				e.emit(Event{Kind: EventTakenBack, Message: m})
				if m.Status == domain.StatusTBDL && m.Crashes > 0 && e.cfg.Blacklisting.Enabled {
					e.recovered.Store(true) // a candidate still: delivered alone
				}
			}
			e.Notify()
		}
		if len(res.HandedBack) > 0 {
			e.log.Warn("recovered without counting a crash: the node lost its lease in an outage", "node", e.node,
				"dead_node", d.ID, "incarnation", d.Incarnation, "returned_to_tbdl", len(res.HandedBack))
			e.Notify()
		}
		if len(res.Requeued)+len(res.Blacklisted) == 0 {
			continue // another node recovered it first, or nothing crashed
		}
		e.log.Warn("crash recovery", "node", e.node, "dead_node", d.ID,
			"returned_to_tbdl", len(res.Requeued), "blacklisted", len(res.Blacklisted))
		for _, m := range res.Requeued {
			e.emit(Event{Kind: EventRequeued, Message: m})
		}
		for _, m := range res.Blacklisted {
			e.log.Warn("message blacklisted", "message", m.ID, "queue", m.Queue, "crashes", m.Crashes)
			e.emit(Event{Kind: EventBlacklisted, Message: m})
		}
		if len(res.Requeued) > 0 && e.cfg.Blacklisting.Enabled {
			e.recovered.Store(true)
		}
		e.Notify()
	}
	return nil
}

// heartbeatLoop tells the store every cluster.heartbeat that the node is
// alive and recovers the dead nodes the store names, until ctx ends. Once
// stop ends — a clean stop, whose drain the heartbeats go on through — it
// takes no more queues and recovers no other node. It returns an error
// when the node was fenced: another node took its queues.
func (e *Engine) heartbeatLoop(ctx, stop context.Context, node store.Node) error {
	t := time.NewTicker(e.cfg.Heartbeat)
	defer t.Stop()
	held := 0 // the queues held at the last heartbeat: log when it changes
	// Crash recovery runs beside the heartbeats: it may wait for the locks
	// of a node frozen inside a transaction, which the heartbeats must not
	// (the node would miss its own lease). A dead node the recovery under
	// way does not take is listed again by a later heartbeat.
	dead := make(chan []store.Node)
	rctx, stopRecovering := context.WithCancel(ctx)
	var recovering sync.WaitGroup
	defer recovering.Wait()
	defer stopRecovering()
	recovering.Go(func() {
		for {
			select {
			case <-rctx.Done():
				return
			case d := <-dead:
				if err := e.recoverDead(rctx, node, d, nil); err != nil && rctx.Err() == nil {
					e.log.Error("crash recovery of a dead node failed", "err", err)
				}
			}
		}
	})
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		start := e.lease.now()
		// A heartbeat that takes longer than the TTL proves nothing.
		hctx, cancel := context.WithTimeout(ctx, e.cfg.LeaseTTL)
		stopping := stop.Err() != nil
		res, err := e.st.Heartbeat(hctx, store.HeartbeatParams{Node: node, TTL: e.cfg.LeaseTTL,
			InFlight: int(e.inFlight.Load()), Stopping: stopping})
		cancel()
		switch {
		case errors.Is(err, store.ErrFenced):
			e.lease.beat(start, true)
			return err
		case err != nil && ctx.Err() == nil:
			e.storeFailed("heartbeating", err)
			continue
		case err != nil:
			return nil
		}
		e.storeOK()
		e.lease.beat(start, false)
		if res.Revived {
			e.log.Warn("this node's heartbeats reach the store again and nobody took its queues over: "+
				"it goes on with what it holds", "node", e.node, "incarnation", node.Incarnation)
			e.Notify()
		}
		if res.Queues != held {
			e.log.Info("queues held", "node", e.node, "queues", res.Queues, "before", held)
			held = res.Queues
		}
		for _, d := range res.Dead {
			if stopping {
				break // the live nodes take it over
			}
			e.log.Warn("node dead: taking over its queues", "node", e.node, "dead_node", d.ID, "incarnation", d.Incarnation)
		}
		if len(res.Dead) > 0 && !stopping {
			select {
			case dead <- res.Dead:
			default: // a recovery is under way
			}
		}
	}
}

// restoreHolds restores the HOLD rule in every queue that has HOLD messages.
// An operator's action restores it in the commit of its last batch; a
// process killed between two batches of one action can leave messages held
// behind a head that no longer blocks them, and the start puts them right.
func (e *Engine) restoreHolds(ctx context.Context, node store.Node) error {
	var held []string
	err := e.st.View(ctx, func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			if q.Counts[domain.StatusHOLD] > 0 {
				held = append(held, q.Name)
			}
			return nil
		})
	})
	if err != nil || len(held) == 0 {
		return err
	}
	at, err := e.st.Now(ctx)
	if err != nil {
		return err
	}
	return e.st.Update(ctx, func(w store.Writer) error {
		for _, q := range held {
			if err := store.RestoreHold(w, q, store.EngineEntry(at, node, "")); err != nil {
				return err
			}
		}
		return nil
	})
}
