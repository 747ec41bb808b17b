package engine

import (
	"context"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// retentionLoop purges DLVD and FAIL messages past their retention (§8)
// until ctx ends, checking every tenth of the shorter retention (at most
// every minute).
func (e *Engine) retentionLoop(ctx context.Context) {
	ret := e.cfg.Retention
	every := min(ret.Delivered, ret.Failed) / 10
	if every <= 0 || every > time.Minute {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now, err := e.st.Now(ctx)
			if err != nil {
				continue
			}
			for _, p := range []struct {
				status domain.Status
				keep   time.Duration
			}{{domain.StatusDLVD, ret.Delivered}, {domain.StatusFAIL, ret.Failed}} {
				if p.keep <= 0 {
					continue
				}
				n, err := store.Purge(ctx, e.st, p.status, now.Add(-p.keep), false, nil)
				if err != nil {
					e.log.Error("purge failed", "status", p.status, "err", err)
				} else if n > 0 {
					e.log.Info("purged", "status", p.status, "messages", n)
				}
			}
		}
	}
}
