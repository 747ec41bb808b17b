package serve

import (
	"context"
	"log/slog"
	"time"

	"github.com/queuectl/queuectl/internal/store"
)

// auditRetention deletes audit entries older than engine.retention.audit
// (§6), so that the audit log, refusals and all, cannot grow without
// bound. It runs beside the engine, at start and then every tenth of the
// retention (at most hourly); a retention of 0 keeps the log for ever.
type auditRetention struct {
	st   store.Store
	keep time.Duration
	now  func() time.Time
	log  *slog.Logger
}

// startAuditRetention runs the audit retention of st in the background
// until the returned stop is called (or ctx ends); stop waits for it.
func startAuditRetention(ctx context.Context, st store.Store, keep time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a := &auditRetention{st: st, keep: keep, now: func() time.Time { return time.Now().UTC() }, log: log}
	go func() {
		defer close(done)
		a.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run purges until ctx ends.
func (a *auditRetention) run(ctx context.Context) {
	if a.keep <= 0 {
		return
	}
	every := min(a.keep/10, time.Hour)
	t := time.NewTicker(max(every, time.Second))
	defer t.Stop()
	for {
		a.purge(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// purge deletes what is past the retention now and logs how much.
func (a *auditRetention) purge(ctx context.Context) int {
	n, err := store.PurgeAudit(ctx, a.st, a.now().Add(-a.keep))
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.Error("audit retention failed", "err", err)
	case n > 0:
		a.log.Info("audit entries purged", "entries", n, "retention", a.keep.String())
	}
	return n
}
