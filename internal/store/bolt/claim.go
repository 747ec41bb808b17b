package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Claim routes ready inbound messages and claims ready outbound messages in
// one transaction.
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) (*store.ClaimResult, error) {
	var out *store.ClaimResult
	var next turns
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		var err error
		out, next, err = t.claim(p, s.claims.Load())
		return err
	})
	if err == nil {
		s.claims.Store(next)
	}
	return out, err
}

// turns is store.Turns: where the next claim starts.
type turns = store.Turns

// claimer is the state of one claim.
type claimer struct {
	t   *txn
	p   store.ClaimParams
	now time.Time
	res *store.ClaimResult
	// routed and claimed count what the claim did, against the limits.
	routed, claimed int
	// last is, per stage, the last queue the claim served.
	last turns
	// waited says an inbound message waited for messages of its lane
	// ahead of it (§10), which routing later in the claim may have moved on.
	waited bool
}

// claim routes, then claims due WAIT messages, then TBDL messages, visiting
// the queues of the ready index from the turn's start on. It returns where
// the next claim's turn starts.
func (t *txn) claim(p store.ClaimParams, start turns) (*store.ClaimResult, turns, error) {
	c := &claimer{t: t, p: p, now: t.now(), last: turns{}}
	c.res = &store.ClaimResult{Now: c.now}
	if c.p.Window <= 0 {
		c.p.Window = 1
	}
	if p.Router != nil && p.RouteLimit > 0 {
		if err := c.walk(domain.Inbound, start[domain.Inbound], c.routeQueue); err != nil {
			return nil, nil, err
		}
		c.res.More = c.res.More || (c.waited && c.routed > 0)
	}
	if p.Limit > 0 {
		if err := c.due(); err != nil {
			return nil, nil, err
		}
		if err := c.walk(domain.Outbound, start[domain.Outbound], c.claimQueue); err != nil {
			return nil, nil, err
		}
	}
	next := maps.Clone(start)
	if next == nil {
		next = turns{}
	}
	for stage, q := range c.last {
		next[stage] = q + "\x01" // just after the last queue served
	}
	return c.res, next, nil
}

// full reports whether the claim reached its limit for a stage, or claimed
// its one candidate.
func (c *claimer) full(s domain.Stage) bool {
	if s == domain.Inbound {
		return c.routed >= c.p.RouteLimit
	}
	return c.claimed >= c.p.Limit || (c.p.Candidates == store.CandidatesAlone && c.claimed > 0)
}

// queue returns a queue's record as it is now in the transaction.
func (c *claimer) queue(name string) (*store.QueueRecord, error) {
	return c.t.queue(name)
}

// walk calls serve for the queues of one stage that have TBDL messages,
// from start on and round, until the stage is full.
func (c *claimer) walk(stage domain.Stage, start string, serve func(name string) error) error {
	prefix := stagePrefix(stage)
	cur := c.t.bucket(bucketReady).Cursor()
	visit := func(from, to []byte) error {
		for k, _ := cur.Seek(from); k != nil && bytes.HasPrefix(k, prefix) && (to == nil || bytes.Compare(k, to) < 0); {
			i := bytes.IndexByte(k[1:], sep)
			if i < 0 {
				return fmt.Errorf("ready index: malformed key %x", k)
			}
			name := string(k[1 : 1+i])
			// A queue of a receiver the node has not configured is
			// passed over before the limit is looked at: its messages
			// are not ready for this node, not even perhaps (More).
			delivers, err := c.delivers(stage, name)
			if err != nil {
				return err
			}
			if delivers {
				if c.full(stage) {
					c.res.More = true // perhaps: another queue has TBDL messages
					return nil
				}
				if err := serve(name); err != nil {
					return err
				}
			}
			// serve changed the bucket: seek past the last key of this
			// queue (a longer name that starts alike sorts after name 0x01).
			k, _ = cur.Seek(append(append(bytes.Clone(prefix), name...), sep+1))
		}
		return nil
	}
	from := append(bytes.Clone(prefix), start...)
	if err := visit(from, nil); err != nil {
		return err
	}
	if start != "" {
		return visit(prefix, from)
	}
	return nil
}

// delivers says whether the claim may start messages of a queue of stage
// (store.ClaimParams.Delivers): every inbound queue, the outbound queues of
// the node's receivers.
func (c *claimer) delivers(stage domain.Stage, name string) (bool, error) {
	if stage == domain.Inbound {
		return true, nil // no need to read it: routing calls no receiver
	}
	q, err := c.queue(name)
	if err != nil {
		return false, err
	}
	return c.p.Delivers(q), nil
}

// readyIDs returns up to n ids of the TBDL messages of a queue, in seq order.
func (c *claimer) readyIDs(stage domain.Stage, name string, n int64) []uuid.UUID {
	var ids []uuid.UUID
	prefix := append(stagePrefix(stage), prefixOf(name)...)
	cur := c.t.bucket(bucketReady).Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && int64(len(ids)) < n; k, v = cur.Next() {
		id, err := storedID(v, fmt.Sprintf("queue %s: an entry of the ready index", name))
		if err != nil {
			c.t.fail(err) // no id to skip: the claim fails, the store is damaged
			break
		}
		ids = append(ids, id)
	}
	return ids
}

// routeQueue routes what it may of one inbound queue's TBDL messages, in seq
// order: an EO queue's up to the limit, an EOIO queue's until one of them
// finds no receiver and blocks it.
func (c *claimer) routeQueue(name string) error {
	q, err := c.queue(name)
	if err != nil {
		return err
	}
	if !q.Starts() {
		return nil
	}
	ids := c.readyIDs(domain.Inbound, name, int64(c.p.RouteLimit-c.routed)+1)
	if len(ids) > c.p.RouteLimit-c.routed {
		ids, c.res.More = ids[:c.p.RouteLimit-c.routed], true // the limit cuts the queue short
	}
	for _, id := range ids {
		m, err := c.t.stored(id)
		if err != nil {
			return corrupt("ready index names a missing message: %v", err)
		}
		if m.Queue != name || m.Status != domain.StatusTBDL {
			continue // it followed a failed message of its app queue to the error queue
		}
		if wait, err := store.LaneWaits(c.t, m.Message); wait || err != nil {
			c.waited = true
			return err // the queue is serial: its later messages wait too
		}
		after, err := c.route(id, m)
		if err != nil {
			return err
		}
		c.routed++
		c.last[domain.Inbound] = name
		if after.Queue == name && domain.Blocks(after.QoS, after.Status, after.ErrorClass) {
			return nil
		}
	}
	return nil
}

// route does receiver determination for one inbound message (§3) in the
// claim's transaction.
func (c *claimer) route(key uuid.UUID, in storedMessage) (*domain.Message, error) {
	res, err := c.t.route(key, in, c.p.Router, store.EngineEntry(c.now, c.p.Node, ""))
	if err != nil {
		return nil, err
	}
	c.res.Routed = append(c.res.Routed, res.Message)
	c.res.Created = append(c.res.Created, res.Created...)
	return res.Message, nil
}

// due claims the outbound WAIT messages whose next attempt is due, and finds
// when the next one will be: of those the node may deliver, so that a
// retry of a receiver it has not configured never wakes it.
func (c *claimer) due() error {
	cur := c.t.bucket(bucketDue).Cursor()
	var keys [][]byte
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if len(k) != 8+16 {
			return corrupt("the due index holds a key of %d bytes, %x", len(k), k)
		}
		at := time.UnixMicro(int64(binary.BigEndian.Uint64(k[:8]))).UTC()
		if !at.After(c.now) {
			keys = append(keys, bytes.Clone(k))
			continue
		}
		m, q, err := c.dueMessage(k)
		if err != nil {
			return err
		}
		if m != nil && c.p.Delivers(q) {
			c.res.NextDue = at
			break
		}
	}
	for _, k := range keys {
		m, q, err := c.dueMessage(k)
		if err != nil {
			return err
		}
		if m == nil || m.Stage != domain.Outbound || !c.p.Delivers(q) {
			continue // not this node's to retry, however many there are
		}
		if c.full(domain.Outbound) {
			c.res.More = true
			return nil
		}
		if q.Room(c.p.Window) <= 0 {
			continue
		}
		if err := c.take(*m); err != nil {
			return err
		}
	}
	return nil
}

// dueMessage reads the message a key of the due index names, and its
// queue; a message that cannot be read is noted as damaged, and nil.
func (c *claimer) dueMessage(k []byte) (*storedMessage, *store.QueueRecord, error) {
	id := uuid.UUID(k[8:])
	m, err := c.t.stored(id)
	if err == nil && m.Status != domain.StatusWAIT {
		err = corrupt("the due index names message %s, which is %s", m.ID, m.Status)
	}
	if err != nil {
		c.damaged(id, err)
		return nil, nil, nil
	}
	q, err := c.queue(m.Queue)
	if err != nil {
		return nil, nil, err
	}
	return &m, q, nil
}

// claimQueue claims TBDL messages of one outbound queue: the head of an
// EOIO queue whose head is TBDL and nothing in flight, the first TBDL
// messages of an EO queue up to its window unless it WAITs.
func (c *claimer) claimQueue(name string) error {
	q, err := c.queue(name)
	if err != nil {
		return err
	}
	room := q.Room(c.p.Window)
	if room <= 0 || !q.Starts() {
		return nil // a WAIT message holds the queue; it is claimed when due
	}
	for _, id := range c.readyIDs(domain.Outbound, name, room) {
		if c.full(domain.Outbound) {
			c.res.More = true
			return nil
		}
		m, err := c.t.stored(id)
		if err == nil && (m.Queue != name || m.Status != domain.StatusTBDL) {
			err = corrupt("queue %s: the ready index names message %s, which is %s in queue %s", name, m.ID, m.Status, m.Queue)
		}
		if err != nil {
			c.damaged(id, err)
			continue
		}
		if err := c.take(m); err != nil {
			return err
		}
		if q.QoS == domain.EOIO {
			return nil
		}
	}
	return nil
}

// damaged notes a message an index names but that cannot be read: the
// claim goes on without it rather than stop every delivery.
func (c *claimer) damaged(id uuid.UUID, err error) {
	if c.res.Damaged == nil {
		c.res.Damaged = map[string]error{}
	}
	c.res.Damaged[id.String()] = err
}

// take claims one ready outbound message, minding blacklist candidates and
// the order of its lane across a switch and its error queue (§10).
func (c *claimer) take(m storedMessage) error {
	if wait, err := store.LaneWaits(c.t, m.Message); wait || err != nil {
		return err
	}
	candidate := m.Crashes > 0 && c.p.Candidates != store.CandidatesAsAny
	switch {
	case candidate && c.p.Candidates == store.CandidatesSkip:
		c.res.Candidates++
		return nil
	case !candidate && c.p.Candidates == store.CandidatesAlone:
		return nil
	}
	payload, err := c.t.payload(m, idOf(m.ID))
	if err != nil {
		c.damaged(idOf(m.ID), err)
		return nil
	}
	attempt := m.Attempts + 1
	node := c.p.Node
	after, err := c.t.transition(idOf(m.ID), m, domain.StatusDLNG, func(m *domain.Message) {
		m.Attempts, m.Node, m.Incarnation, m.NextAttemptAt = attempt, node.ID, node.Incarnation, nil
	}, store.EngineEntry(c.now, node, fmt.Sprintf("delivery attempt %d", attempt)))
	if err != nil {
		return err
	}
	c.res.Claimed = append(c.res.Claimed, store.Claimed{Message: after, Epoch: c.t.epoch(), Payload: payload})
	c.last[domain.Outbound] = after.Queue
	c.claimed++
	return nil
}
