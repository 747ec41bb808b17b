package local_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

const (
	raceOperators  = 4
	raceActionsPer = 750 // 3000 actions in all
	raceBatches    = 30  // batches of 10 messages sent while the operators act
)

var raceActions = []admin.Action{admin.ActResend, admin.ActResend, admin.ActFail, admin.ActFail, admin.ActRelease,
	admin.ActStop, admin.ActStart}

// opLog is what the operators did, for the checks at the end.
type opLog struct {
	mu      sync.Mutex
	changed map[admin.Action]int
	skipped map[admin.Action]int
	// failed holds every message an operator made FAIL: no one may change it again.
	failed map[string]bool
}

func (l *opLog) add(a admin.Action, res *admin.BulkResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changed[a] += res.Changed
	l.skipped[a] += len(res.Skipped)
	if a == admin.ActFail {
		for _, id := range res.ChangedIDs {
			l.failed[id] = true
		}
	}
}

// TestActRacesEngine lets operators resend, fail, release, stop and start
// random messages and queues while the engine delivers them to a flaky
// receiver, on the same store. Every action is a compare-and-set, so the
// operators and the engine may each win or lose, but no final status is
// ever overwritten and the counters always match the messages (§4).
func TestActRacesEngine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the race runs 3000 operator actions against the engine")
	}

	b := setupRace(t)
	_, err := b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOInbound, Sub: "CENTRAL", Value: "3"})
	require.NoError(t, err)
	_, err = b.svc.Tune(b.ctx, admin.TuneParams{Param: placement.ParamEOOutbound, Sub: "", Value: "3"})
	require.NoError(t, err)
	b.crashedHeads(t, "CRASH1", "CRASH2", "CRASH3")
	b.sendMix(t, 30)

	stop := b.start(t, "node-1")
	ops := &opLog{changed: map[admin.Action]int{}, skipped: map[admin.Action]int{}, failed: map[string]bool{}}
	tick := make(chan struct{}, raceBatches)
	var wg sync.WaitGroup
	errs := make(chan error, raceOperators+1)
	for g := range raceOperators {
		wg.Go(func() {
			if err := b.operate(g, ops, tick); err != nil {
				errs <- fmt.Errorf("operator %d: %w", g, err)
			}
		})
	}
	wg.Go(func() {
		for range raceBatches {
			if _, ok := <-tick; !ok {
				return
			}
			if err := b.trySendMix(1); err != nil {
				errs <- fmt.Errorf("producer: %w", err)
				return
			}
		}
	})
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(raceDeadline):
		t.Fatalf("the operators did not finish within %s", raceDeadline)
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err, "an action racing the engine either wins or is skipped; it never fails")
	}
	stop()

	require.Empty(t, b.inStatus(t, domain.StatusDLNG), "a clean shutdown leaves nothing DLNG")
	require.Equal(t, countsByWalk(t, b.st), countsKept(t, b.st), "the counters match the messages")

	b.drain(t)
	b.checkFinal(t, ops)
	t.Logf("operators changed %v, skipped %v; engine events %v", ops.changed, ops.skipped, b.eventCounts())
	require.Positive(t, ops.changed[admin.ActResend], "the race resent messages")
	require.Positive(t, ops.changed[admin.ActFail], "the race failed messages")
	require.Empty(t, b.troubles, "the engine lost no compare-and-set and no store write")
}

// operate runs one operator's actions on random open messages (and now
// and then on any message, final ones included) and their queues.
func (b *raceBundle) operate(g int, ops *opLog, tick chan<- struct{}) error {
	if g == 0 {
		defer close(tick) // the producer sends no more
	}
	rng := rand.New(rand.NewPCG(uint64(g), 42))
	var pool targetPool
	for i := range raceActionsPer {
		if i%10 == 0 {
			if err := pool.refresh(b, i%100 == 0); err != nil {
				return err
			}
		}
		if g == 0 && i%25 == 24 {
			select {
			case tick <- struct{}{}:
			default:
			}
		}
		a := raceActions[rng.IntN(len(raceActions))]
		var targets []string
		switch {
		case a.QueueAction():
			targets = []string{pool.queues[rng.IntN(len(pool.queues))]}
		default:
			targets = pool.pick(rng, 1+rng.IntN(3))
		}
		res, err := b.svc.Act(b.ctx, admin.ActParams{Action: a, Targets: targets, Reason: "race"})
		if err != nil {
			return fmt.Errorf("%s %v: %w", a, targets, err)
		}
		ops.add(a, res)
	}
	return nil
}

// targetPool is what an operator picks targets from: a snapshot, soon
// stale, so an id picked from it may have moved on, which is the point.
// Operators mostly pick messages that were WAIT, HOLD or NDLV, where they
// and the engine compete.
type targetPool struct {
	contested, open, final, queues []string
}

// pick draws n ids: six times in ten from the contested messages, three
// from the other open ones, one from the final ones (a list that is empty
// gives way to the next one that is not).
func (p *targetPool) pick(rng *rand.Rand, n int) []string {
	lists := [][]string{p.final, p.contested, p.open}
	switch k := rng.IntN(10); {
	case k < 6:
		lists = [][]string{p.contested, p.open, p.final}
	case k < 9:
		lists = [][]string{p.open, p.contested, p.final}
	}
	for _, from := range lists {
		if len(from) > 0 {
			out := make([]string, n)
			for i := range out {
				out[i] = from[rng.IntN(len(from))]
			}
			return out
		}
	}
	return nil
}

// refresh reads the open messages and the queues from the status index;
// with withFinal, the DLVD and FAIL messages too.
func (p *targetPool) refresh(b *raceBundle, withFinal bool) error {
	p.contested, p.open, p.queues = p.contested[:0], p.open[:0], p.queues[:0]
	if withFinal {
		p.final = p.final[:0]
	}
	return b.st.View(b.ctx, func(r store.Reader) error {
		statuses := open
		if withFinal {
			statuses = append([]domain.Status{domain.StatusDLVD, domain.StatusFAIL}, open...)
		}
		if err := r.Messages(store.MessageFilter{Statuses: statuses}, func(m *domain.Message) error {
			switch m.Status {
			case domain.StatusWAIT, domain.StatusHOLD, domain.StatusNDLV:
				p.contested = append(p.contested, m.ID)
			case domain.StatusTBDL, domain.StatusDLNG:
				p.open = append(p.open, m.ID)
			default:
				p.final = append(p.final, m.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		return r.Queues("", func(q *store.QueueRecord) error {
			p.queues = append(p.queues, q.Name)
			return nil
		})
	})
}

// drain lets a second engine finish everything the race left open: every
// queue started, every NDLV and WAIT message resent, the receiver healthy.
func (b *raceBundle) drain(t *testing.T) {
	t.Helper()
	b.healthy.Store(true)
	var queues []string
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		return r.Queues("", func(q *store.QueueRecord) error {
			if q.Stopped {
				queues = append(queues, q.Name)
			}
			return nil
		})
	}))
	if len(queues) > 0 {
		res, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActStart, Targets: queues})
		require.NoError(t, err)
		require.Equal(t, len(queues), res.Changed)
	}
	if left := ids(b.inStatus(t, domain.StatusNDLV, domain.StatusWAIT)); len(left) > 0 {
		res, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActResend, Targets: left})
		require.NoError(t, err)
		require.Equal(t, len(left), res.Changed)
	}
	stop := b.start(t, "node-2")
	b.waitFor(t, "every message DLVD or FAIL", func() bool { return len(b.inStatus(t, open...)) == 0 })
	stop()
}
