package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/engine"
	"github.com/queuectl/queuectl/internal/receiver"
	"github.com/queuectl/queuectl/internal/store"
)

// goroutine names the goroutine that calls it.
func goroutine() string {
	var buf [64]byte
	line := string(buf[:runtime.Stack(buf[:], false)])
	id, _, _ := strings.Cut(strings.TrimPrefix(line, "goroutine "), " ")
	return id
}

// recordCall is one Record call the engine made.
type recordCall struct {
	on       string
	outcomes []string
	claimed  []string
}

// recordLog is a store that notes the engine's Record calls.
type recordLog struct {
	engine.Store
	mu    sync.Mutex
	calls []recordCall
}

func (s *recordLog) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	res, err := s.Store.Record(ctx, p)
	c := recordCall{on: goroutine()}
	for _, o := range p.Outcomes {
		c.outcomes = append(c.outcomes, o.ID)
	}
	if err == nil && res.Claim != nil {
		for _, m := range res.Claim.Claimed {
			c.claimed = append(c.claimed, m.Message.ID)
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	return res, err
}

// delivery is one call of a stepReceiver.
type delivery struct {
	id, payload, on string
	// stored is what the store said of the message and of the one before
	// it, when the receiver was called.
	stored, before domain.Status
}

// stepReceiver accepts every message and notes, per call, its goroutine
// and what the store holds of the message and of the one delivered before.
type stepReceiver struct {
	st  store.Store
	mu  sync.Mutex
	got []delivery
}

// deliveries returns the calls so far.
func (r *stepReceiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *stepReceiver) Deliver(ctx context.Context, d receiver.Delivery) error {
	got := delivery{id: d.Message.ID, payload: string(d.Payload), on: goroutine()}
	status := func(id string) domain.Status {
		var s domain.Status
		_ = r.st.View(ctx, func(rd store.Reader) error {
			m, err := rd.Message(id)
			if err == nil {
				s = m.Status
			}
			return err
		})
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	got.stored = status(got.id)
	if n := len(r.got); n > 0 {
		got.before = status(r.got[n-1].id)
	}
	r.got = append(r.got, got)
	return nil
}

// An EOIO queue's step (§14): when message k's receiver returns, the worker
// that delivered k records k's outcome and claims k+1 in one store call,
// and delivers k+1 itself — no hand-off to the loop or the completer — once
// that call committed k DLVD and k+1 DLNG.
func TestEOIOStepRecordsAndClaimsOnTheWorker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := &stepReceiver{st: b.st}
	b.receivers = map[string]receiver.Receiver{"WMS": rcv}
	log := &recordLog{}
	b.wrap = func(s engine.Store) engine.Store { log.Store = s; return log }
	// Routed as they are sent, as serve does: the queue's five messages
	// are TBDL before the engine starts.
	svc := local.New(b.st, local.Options{Actor: "test", RouteAtSend: true, Receivers: []string{"WMS"}})
	const n = 5
	var reqs []domain.SendRequest
	for i := 1; i <= n; i++ {
		reqs = append(reqs, eoio("WMS", "A", fmt.Sprint("A-", i)))
	}
	_, err := svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	b.start(t)
	b.waitSettled(t, "the queue delivered", func() bool { return b.count(engine.EventDelivered) == n })

	rcv.mu.Lock()
	got := slices.Clone(rcv.got)
	rcv.mu.Unlock()
	require.Len(t, got, n)
	for i, d := range got {
		require.Equal(t, fmt.Sprint("A-", i+1), d.payload, "in order")
		require.Equal(t, domain.StatusDLNG, d.stored, "%s is DLNG, durably, before its receiver is called", d.payload)
		if i > 0 {
			require.Equal(t, domain.StatusDLVD, d.before, "%s is recorded before %s is delivered", got[i-1].payload, d.payload)
		}
	}
	log.mu.Lock()
	calls := slices.Clone(log.calls)
	log.mu.Unlock()
	for i, d := range got {
		var step []recordCall
		for _, c := range calls {
			if slices.Contains(c.outcomes, d.id) {
				step = append(step, c)
			}
		}
		require.Len(t, step, 1, "%s's outcome is recorded by one call", d.payload)
		require.Equal(t, []string{d.id}, step[0].outcomes, "%s's outcome is recorded alone", d.payload)
		require.Equal(t, d.on, step[0].on, "%s's outcome is recorded by the worker that delivered it", d.payload)
		if i == n-1 {
			require.Empty(t, step[0].claimed, "nothing is left to claim")
			continue
		}
		next := got[i+1]
		require.Equal(t, []string{next.id}, step[0].claimed, "the call that records %s claims %s", d.payload, next.payload)
		require.Equal(t, d.on, next.on, "the worker that delivered %s delivers %s", d.payload, next.payload)
	}
	require.Len(t, calls, n, "one store call per message")
}

// lostReply is a store whose nth Record call commits and then fails, as
// when the connection drops before the reply.
type lostReply struct {
	engine.Store
	mu    sync.Mutex
	n     int
	calls int
}

func (s *lostReply) Record(ctx context.Context, p store.RecordParams) (*store.RecordResult, error) {
	res, err := s.Store.Record(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err == nil && s.calls == s.n {
		return nil, errors.New("connection reset by peer")
	}
	return res, err
}

// A step whose store call committed but whose reply was lost: the claim
// it may have made is unknown to the node, so the loop reconciles — the
// head goes back to TBDL — before it claims again; the outcome is kept
// and recorded; the queue goes on in order, every message delivered once.
func TestEOIOStepWithALostReply(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := &stepReceiver{st: b.st}
	b.receivers = map[string]receiver.Receiver{"WMS": rcv}
	b.wrap = func(s engine.Store) engine.Store { return &lostReply{Store: s, n: 2} }
	svc := local.New(b.st, local.Options{Actor: "test", RouteAtSend: true, Receivers: []string{"WMS"}})
	const n = 4
	var reqs []domain.SendRequest
	for i := 1; i <= n; i++ {
		reqs = append(reqs, eoio("WMS", "A", fmt.Sprint("A-", i)))
	}
	sent, err := svc.Send(b.ctx, reqs)
	require.NoError(t, err)
	b.start(t)
	b.waitSettled(t, "the queue delivered", func() bool {
		return b.count(engine.EventDelivered) == n-1 && b.count(engine.EventHandedBack) == 1 && len(rcv.deliveries()) == n
	})

	var payloads []string
	ids := map[string]string{}
	for _, d := range rcv.deliveries() {
		payloads = append(payloads, d.payload)
		ids[d.payload] = d.id
		require.Equal(t, domain.StatusDLNG, d.stored, "%s is DLNG before its receiver is called", d.payload)
	}
	require.Equal(t, []string{"A-1", "A-2", "A-3", "A-4"}, payloads, "in order, each once")
	require.Equal(t, ids["A-3"], b.eventsOf(engine.EventHandedBack)[0].Message.ID,
		"the head the lost call claimed is handed back")
	for _, m := range sent {
		for _, out := range b.outbound(t, m.ID) {
			require.Equal(t, domain.StatusDLVD, out.Status)
			require.Zero(t, out.Crashes)
		}
	}
}
