package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Claim claims ready outbound messages in one statement, one round trip
// (claimSQL). When the node holds an inbound queue with messages to route,
// or EOIO queues whose order follows a switch (§10), it goes on in a
// transaction of the general claim, which routes and applies the switch's
// rules in Go (store.Route, store.LaneWaits); so does a claim of a
// blacklist candidate alone.
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) (*store.ClaimResult, error) {
	if p.Candidates == store.CandidatesAlone || s.inbound.Load() && p.Router != nil && p.RouteLimit > 0 {
		// The last claim left messages to route: this one routes
		// first, and claims what it made ready in its transaction.
		return s.generalClaim(ctx, p)
	}
	h, err := s.claimHot(ctx, p)
	if err != nil {
		return nil, err
	}
	return s.claimRest(ctx, p, h)
}

// claimHot runs the claim statement — with the taking of free leases when
// lease_changes moved since the last claim took them — and once more,
// taking them, when it finds that they moved.
func (s *Store) claimHot(ctx context.Context, p store.ClaimParams) (*hotClaim, error) {
	h, adopted, err := s.claimOnce(ctx, p)
	if err != nil || adopted || !s.adoptDue() {
		return h, err
	}
	rest := p
	rest.Limit = max(0, p.Limit-len(h.res.Claimed))
	again, _, err := s.claimOnce(ctx, rest)
	if err != nil {
		return h, nil // what the first claimed is DLNG: the caller must have it
	}
	again.res = merged(h.res, again.res)
	return again, nil
}

// claimOnce runs the claim statement, after the taking of free leases when
// they are due (adoptDue), which it reports.
func (s *Store) claimOnce(ctx context.Context, p store.ClaimParams) (h *hotClaim, adopted bool, err error) {
	start := s.claims.Load()
	err = s.hotBatch(ctx, func(b *pgx.Batch) func() error {
		adopted = s.adoptDue()
		if adopted {
			queueAdopt(b, int64(p.Node.Incarnation), clean(p.Node.ID))
		}
		h = queueHotClaim(b, p, start[domain.Outbound], nil)
		return h.done
	})
	if err != nil {
		return nil, false, err
	}
	s.sawLeases(h.gen, adopted)
	s.turned(start, h.last)
	return h, adopted, nil
}

// claimRest goes on with the general claim after the claim statement h
// when the node has messages to route, or EOIO queues under a switch's
// rules: in a transaction of its own, which claims what routing made
// ready, up to what is left of p's limit.
func (s *Store) claimRest(ctx context.Context, p store.ClaimParams, h *hotClaim) (*store.ClaimResult, error) {
	s.inbound.Store(h.routable)
	if !(h.routable && p.Router != nil && p.RouteLimit > 0) && h.lanes == 0 {
		return h.res, nil
	}
	rest := p
	rest.Limit = max(0, p.Limit-len(h.res.Claimed))
	more, err := s.generalClaim(ctx, rest)
	if err != nil {
		if len(h.res.Claimed) > 0 {
			// What the statement claimed is DLNG: the caller must have
			// it. The next claim routes.
			h.res.More = true
			return h.res, nil
		}
		return nil, err
	}
	return merged(h.res, more), nil
}

// merged is the result of two claims made one after the other.
func merged(a, b *store.ClaimResult) *store.ClaimResult {
	out := *b
	out.Claimed = append(slices.Clone(a.Claimed), b.Claimed...)
	out.Candidates = a.Candidates + b.Candidates
	if out.NextDue.IsZero() || !a.NextDue.IsZero() && a.NextDue.Before(out.NextDue) {
		out.NextDue = a.NextDue
	}
	out.Routed = append(slices.Clone(a.Routed), b.Routed...)
	out.Created = append(slices.Clone(a.Created), b.Created...)
	return &out
}

// turned keeps, after a claim that began its turn at start and served
// queue last last, where the next claim starts.
func (s *Store) turned(start turns, last string) {
	if last == "" {
		return
	}
	next := maps.Clone(start)
	if next == nil {
		next = turns{}
	}
	next[domain.Outbound] = last
	s.claims.Store(next)
}

// generalClaim routes ready inbound messages and claims ready outbound
// messages in one transaction, in the queues whose lease the node holds.
func (s *Store) generalClaim(ctx context.Context, p store.ClaimParams) (*store.ClaimResult, error) {
	var out *store.ClaimResult
	var next turns
	var routable bool
	err := s.engineOn(ctx, s.hot, func(t *txn) error {
		var err error
		out, next, err = t.claim(p, s.claims.Load(), true, nil)
		routable = t.routable
		return err
	})
	if err != nil {
		return nil, err
	}
	s.claims.Store(next)
	s.inbound.Store(routable)
	return out, nil
}

// turns is store.Turns: where the next claim starts.
type turns = store.Turns

// lease is a lease the claiming node holds, on a queue with work.
type lease struct {
	epoch uint64
	stage domain.Stage
	qos   domain.QoS
}

// claimer is the state of one claim of the general path.
type claimer struct {
	t   *txn
	p   store.ClaimParams
	now time.Time
	res *store.ClaimResult
	// held are the node's leases of queues with work, by queue.
	held map[string]lease
	// routed and claimed count what the claim did, against the limits.
	routed, claimed int
	// last is, per stage, the last queue the claim served.
	last turns
	// waited says an inbound message waited for messages of its lane
	// ahead of it (§10), which routing later in the claim may have moved on.
	waited bool
	// prefer are the messages whose queues the claim serves first: the
	// outcomes it rides with.
	prefer []pgtype.UUID
}

// heldSQL lists the leases incarnation $1 holds on queues with work, or
// that this transaction changed ($2), whose messages the claim may start
// (its receivers $3), and locks them FOR SHARE until commit: no node takes
// them over, and their holder gives none of them up, while the claim and
// its outcomes are under way.
var heldSQL = `SELECT l.queue, l.epoch, q.stage, q.qos FROM leases l JOIN queues q ON q.name = l.queue
	WHERE l.incarnation = $1 AND l.expires_at > now() AND NOT l.releasing AND NOT q.stopped
		AND (q.n_tbdl > 0 OR q.n_wait > 0 OR q.name = ANY($2)) AND ` + deliversSQL("$3") + `
	ORDER BY l.queue FOR SHARE OF l`

// claim routes, then claims, in the held queues from the turn's start on:
// the EOIO queues under a switch's order rules (or, for a candidate alone,
// every queue) in Go, the rest in the claim statement. It returns where
// the next claim's turn starts. fence checks first that the node is alive;
// pre, if set, holds writes of the caller that travel with the claim's
// first statements.
func (t *txn) claim(p store.ClaimParams, start turns, fence bool, pre *pgx.Batch) (*store.ClaimResult, turns, error) {
	c := t.claimer(p)
	b := pre
	if b == nil {
		b = &pgx.Batch{}
	}
	t.queueFlush(b)
	done := c.queueLeases(b, fence)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return nil, nil, fmt.Errorf("claim: leases: %w", err)
	}
	if err := done(); err != nil {
		return nil, nil, err
	}
	return c.finish(start)
}

// claimer starts a claim.
func (t *txn) claimer(p store.ClaimParams) *claimer {
	c := &claimer{t: t, p: p, res: &store.ClaimResult{}, last: turns{}}
	if c.p.Window <= 0 {
		c.p.Window = 1
	}
	return c
}

// finish goes on with a claim whose leases were read: it routes, then
// claims.
func (c *claimer) finish(start turns) (*store.ClaimResult, turns, error) {
	t, p := c.t, c.p
	c.now = t.clock
	c.res.Now = c.now
	if p.Router != nil && p.RouteLimit > 0 && c.routes() {
		for _, name := range c.order(domain.Inbound, start[domain.Inbound]) {
			if c.full(domain.Inbound) {
				c.res.More = true
				break
			}
			if err := c.routeQueue(name); err != nil {
				return nil, nil, err
			}
		}
		c.res.More = c.res.More || (c.waited && c.routed > 0)
		if c.routed > 0 {
			// What routing made ready — in new queues too — is
			// claimed at once.
			if err := c.leases(); err != nil {
				return nil, nil, err
			}
		}
	}
	if p.Limit > 0 {
		if err := c.outbound(start[domain.Outbound]); err != nil {
			return nil, nil, err
		}
	}
	next := maps.Clone(start)
	if next == nil {
		next = turns{}
	}
	maps.Copy(next, c.last)
	return c.res, next, nil
}

// outbound claims ready outbound messages: a candidate alone, or the EOIO
// queues under a switch's order rules, in Go (lanes.go); then the rest in
// the claim statement, in this transaction, after its writes.
func (c *claimer) outbound(start string) error {
	t := c.t
	if c.p.Candidates == store.CandidatesAlone {
		return c.lanes(start, c.order(domain.Outbound, start))
	}
	sw, err := t.EOIO()
	if err != nil {
		return err
	}
	if sw.Switched() {
		var eoio []string
		for _, name := range c.order(domain.Outbound, start) {
			if c.held[name].qos == domain.EOIO {
				eoio = append(eoio, name)
			}
		}
		if err := c.lanes(start, eoio); err != nil {
			return err
		}
	}
	left := c.p.Limit - c.claimed
	if left <= 0 {
		c.res.More = true
		return nil
	}
	p := c.p
	p.Limit = left
	b := &pgx.Batch{}
	t.queueFlush(b)
	h := queueHotClaim(b, p, start, c.prefer)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	if err := h.done(); err != nil {
		return err
	}
	c.res.Claimed = append(c.res.Claimed, h.res.Claimed...)
	c.res.Candidates += h.res.Candidates
	c.res.More = c.res.More || h.res.More
	if !h.res.NextDue.IsZero() && (c.res.NextDue.IsZero() || h.res.NextDue.Before(c.res.NextDue)) {
		c.res.NextDue = h.res.NextDue
	}
	c.claimed += len(h.res.Claimed)
	t.routable = h.routable
	if h.last != "" {
		c.last[domain.Outbound] = h.last
	}
	return nil
}

// leases takes free leases up to the node's share and reads the held ones,
// in a round trip of its own.
func (c *claimer) leases() error {
	b := &pgx.Batch{}
	done := c.queueLeases(b, false)
	if err := c.t.tx.SendBatch(c.t.ctx, b).Close(); err != nil {
		return fmt.Errorf("claim: leases: %w", err)
	}
	return done()
}

// queueLeases queues on b the statements of leases — after a check that the
// node is alive, if fence — and the read of the EOIO switch state, and
// returns what to call once b ran.
func (c *claimer) queueLeases(b *pgx.Batch, fence bool) func() error {
	inc := int64(c.p.Node.Incarnation)
	c.t.queueNow(b)
	var check func() error
	if fence {
		check = queueFence(b, c.p.Node)
	}
	queueAdopt(b, inc, clean(c.p.Node.ID))
	held := map[string]lease{}
	b.Queue(heldSQL, inc, slices.Collect(maps.Keys(c.t.queues)), c.p.Receivers).Query(func(rows pgx.Rows) error {
		var name string
		var l lease
		_, err := pgx.ForEachRow(rows, []any{&name, &l.epoch, &l.stage, &l.qos}, func() error {
			held[name] = l
			return nil
		})
		return err
	})
	c.t.queueEOIO(b)
	return func() error {
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		c.held = held
		return nil
	}
}

// routes says whether a held inbound queue may have something to route.
func (c *claimer) routes() bool {
	for _, l := range c.held {
		if l.stage == domain.Inbound {
			return true
		}
	}
	return false
}

// order returns the held queues of a stage, from the first after start on,
// and round.
func (c *claimer) order(stage domain.Stage, start string) []string {
	var names []string
	for name, l := range c.held {
		if l.stage == stage {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	i, _ := slices.BinarySearch(names, start)
	if i < len(names) && names[i] == start {
		i++ // the queue served last goes last
	}
	return append(names[i:], names[:i]...)
}

// full reports whether the claim reached its limit for a stage, or claimed
// its one candidate.
func (c *claimer) full(s domain.Stage) bool {
	if s == domain.Inbound {
		return c.routed >= c.p.RouteLimit
	}
	return c.claimed >= c.p.Limit || (c.p.Candidates == store.CandidatesAlone && c.claimed > 0)
}
