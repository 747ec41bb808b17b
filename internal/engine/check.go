package engine

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// storeRetry is how long the check-back waits after the store failed.
const storeRetry = time.Second

// checkBatch bounds the check-backs of one claim: their producers are asked
// at once, and their answers recorded in one transaction.
const checkBatch = 32

// checkStore is what the check-back needs of a store.
type checkStore interface {
	store.CheckStore
	Now(ctx context.Context) (time.Time, error)
}

// checker checks back with the producers of prepared messages that were
// neither committed nor rolled back (§9), as one service of the engine: it
// claims the PEND messages of the node's queues that are due — tx.check_after
// after they were prepared, then every tx.check_interval — asks their
// producers, and records the answers.
type checker struct {
	st   checkStore
	node store.Node
	// placer places a committed EOIO message (§10).
	placer placement.Placer
	cfg    Tx
	client *http.Client
	log    *slog.Logger
	emit   func(Event)
	// poke wakes the checker (Engine.Notify); committed wakes delivery.
	poke      chan struct{}
	committed func()
}

// run checks until ctx ends. It sleeps until the next check is due, at most
// tx.check_interval (new messages are prepared all the time), or until it
// is poked.
func (c *checker) run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-c.poke:
		}
		resetTimer(timer, c.checkDue(ctx))
	}
}

// checkDue runs the checks that are due, batch after batch, and returns how
// long the checker may sleep.
func (c *checker) checkDue(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		res, err := c.st.ClaimChecks(ctx, store.ClaimChecksParams{
			Node: c.node, After: c.cfg.After, Interval: c.cfg.Interval, Limit: checkBatch,
		})
		if err != nil {
			if ctx.Err() == nil {
				c.log.Error("claiming check-backs failed; trying again in 1s", "err", err)
			}
			return storeRetry
		}
		if len(res.Claimed) > 0 {
			c.check(ctx, res.Claimed)
		}
		if !res.More {
			return c.untilDue(ctx, res.NextDue)
		}
	}
	return 0
}

// untilDue is how long to sleep until next, on the store's clock, and at
// most tx.check_interval.
func (c *checker) untilDue(ctx context.Context, next time.Time) time.Duration {
	if next.IsZero() {
		return c.cfg.Interval
	}
	now, err := c.st.Now(ctx)
	if err != nil {
		return storeRetry
	}
	return min(max(next.Sub(now), 0), c.cfg.Interval)
}

// check asks the producers of the claimed messages, all at once, and records
// their answers. Checks that a shutdown cut short are not answers: nothing
// is recorded, and the messages are checked again an interval after the
// claim.
func (c *checker) check(ctx context.Context, claimed []*domain.Message) {
	outcomes := make([]store.CheckOutcome, len(claimed))
	var wg sync.WaitGroup
	for i, m := range claimed {
		wg.Go(func() { outcomes[i] = c.ask(ctx, m) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	res, err := c.st.RecordChecks(ctx, store.RecordChecksParams{Node: c.node, Outcomes: outcomes, MaxChecks: c.cfg.MaxChecks,
		Placer: c.placer})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("recording check-backs failed; the producers are asked again", "err", err,
				"fenced", errors.Is(err, store.ErrFenced))
		}
		return
	}
	committed := false
	for i, o := range outcomes {
		m := res.Applied[i]
		if m == nil {
			c.log.Info("check-back dropped: the message changed meanwhile", "message", o.ID, "err", res.Conflicts[o.ID])
			continue
		}
		committed = committed || o.Kind == store.CheckCommit
		c.report(o, m)
	}
	if committed && c.committed != nil {
		c.committed() // committed messages are ready for delivery
	}
}

// report tells the observer and the log what one recorded check did.
func (c *checker) report(o store.CheckOutcome, m *domain.Message) {
	args := []any{"message", m.ID, "sender", m.Sender, "queue", m.Queue, "checks", m.Checks, "answer", o.Answer}
	switch {
	case o.Kind == store.CheckCommit:
		c.log.Info("check-back: committed", args...)
		c.emit(Event{Kind: EventCheckCommitted, Message: m})
	case o.Kind == store.CheckRollback:
		c.log.Info("check-back: rolled back", args...)
		c.emit(Event{Kind: EventCheckRolledBack, Message: m})
	case m.Stuck:
		c.log.Warn("transaction stuck: it stays PEND until an operator commits or rolls it back",
			append(args, "detail", o.Detail)...)
		c.emit(Event{Kind: EventStuck, Message: m})
	default:
		c.log.Info("check-back unanswered", append(args, "detail", o.Detail)...)
		c.emit(Event{Kind: EventCheckUnanswered, Message: m})
	}
}
