package engine

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// retentionLoop deletes what is past its retention until ctx ends: DLVD and
// FAIL messages (engine.retention.delivered and .failed, §8), the empty
// queues that no tuning value in force creates again, and audit entries
// (engine.retention.audit, §6), so that nothing — refused requests
// included, a mistyped parallelism — grows the store without bound. It runs at start, then every
// tenth of the shortest retention, at most every minute. A retention of 0
// keeps its kind for ever.
func (e *Engine) retentionLoop(ctx context.Context) {
	every := time.Minute
	for _, keep := range []time.Duration{e.cfg.Retention.Delivered, e.cfg.Retention.Failed, e.cfg.Retention.Audit} {
		if keep > 0 {
			every = min(every, keep/10)
		}
	}
	t := time.NewTicker(max(every, time.Millisecond))
	defer t.Stop()
	for {
		e.purgeExpired(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// purgeExpired deletes what is past its retention now, on the store's clock.
func (e *Engine) purgeExpired(ctx context.Context) {
	now, err := e.st.Now(ctx)
	if err != nil {
		return
	}
	ret := e.cfg.Retention
	for _, p := range []struct {
		status domain.Status
		keep   time.Duration
	}{{domain.StatusDLVD, ret.Delivered}, {domain.StatusFAIL, ret.Failed}} {
		if p.keep <= 0 {
			continue
		}
		n, err := store.Purge(ctx, e.st, p.status, now.Add(-p.keep), false, nil)
		switch {
		case err != nil && ctx.Err() == nil:
			e.log.Error("purge failed", "status", p.status, "err", err)
		case n > 0:
			e.log.Info("purged", "status", p.status, "messages", n)
		}
	}
	queues, err := store.DeleteUncreatedQueues(ctx, e.st, false, nil)
	switch {
	case err != nil && ctx.Err() == nil:
		e.log.Error("queue retention failed", "err", err)
	case len(queues) > 0:
		e.log.Info("empty queues removed", "queues", len(queues), "reason", "no tuning value in force creates them")
	}
	if ret.Audit <= 0 {
		return
	}
	n, err := store.PurgeAudit(ctx, e.st, now.Add(-ret.Audit))
	switch {
	case err != nil && ctx.Err() == nil:
		e.log.Error("audit retention failed", "err", err)
	case n > 0:
		e.log.Info("audit entries purged", "entries", n, "retention", ret.Audit.String())
	}
}
