package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Claim marks ready messages DLNG in one transaction.
func (s *Store) Claim(ctx context.Context, p store.ClaimParams) (*store.ClaimResult, error) {
	var out *store.ClaimResult
	var next string
	err := s.engineUpdate(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		var err error
		out, next, err = t.claim(p, s.claimStart())
		return err
	})
	if err == nil {
		s.setClaimStart(next)
	}
	return out, err
}

// claimStart is the queue the next claim starts at, so that queues take
// turns; setClaimStart moves it on after a claim committed.
func (s *Store) claimStart() string {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	return s.claimFrom
}

func (s *Store) setClaimStart(q string) {
	s.claimMu.Lock()
	s.claimFrom = q
	s.claimMu.Unlock()
}

// claimer is the state of one claim.
type claimer struct {
	t      *txn
	p      store.ClaimParams
	now    time.Time
	res    *store.ClaimResult
	queues map[string]*store.QueueRecord
	// last is the last queue a message was claimed from.
	last string
	// claimed counts the messages claimed per stage.
	inbound, outbound int
	done              bool // both limits are reached, or a candidate claimed alone
}

// full reports whether a stage's limit is reached.
func (c *claimer) full(s domain.Stage) bool {
	if s == domain.Inbound {
		return c.inbound >= c.p.InboundLimit
	}
	return c.outbound >= c.p.Limit
}

// claim claims due WAIT messages first, then TBDL messages, visiting the
// queues of the ready index from start on, round robin. It returns the
// queue the next claim should start at.
func (t *txn) claim(p store.ClaimParams, start string) (*store.ClaimResult, string, error) {
	c := &claimer{t: t, p: p, now: t.now(), res: &store.ClaimResult{}, queues: map[string]*store.QueueRecord{},
		done: p.Limit <= 0 && p.InboundLimit <= 0}
	if p.Window <= 0 {
		c.p.Window = 1
	}
	if err := c.due(); err != nil {
		return nil, "", err
	}
	if err := c.ready(start); err != nil {
		return nil, "", err
	}
	if c.inbound > 0 && p.Params {
		err := t.Params(func(pr domain.Param) error {
			c.res.Params = append(c.res.Params, pr)
			return nil
		})
		if err != nil {
			return nil, "", err
		}
	}
	next := start
	if c.last != "" {
		next = c.last + "\x01" // just after the last queue served
	}
	return c.res, next, nil
}

// queue returns a queue's record as it is now in the transaction.
func (c *claimer) queue(name string) (*store.QueueRecord, error) {
	if q, ok := c.queues[name]; ok {
		return q, nil
	}
	q, err := c.t.Queue(name)
	if err != nil {
		return nil, err
	}
	c.queues[name] = q
	return q, nil
}

// blocking counts the NDLV messages that hold a queue up.
func blocking(q *store.QueueRecord) int64 {
	return q.Counts[domain.StatusNDLV] - q.PassedOver
}

// room is how many more messages of q may be DLNG at once: one for an EOIO
// queue with nothing in flight, up to the window for an EO queue, none for a
// stopped or blocked queue.
func (c *claimer) room(q *store.QueueRecord) int64 {
	if q.Stopped || blocking(q) > 0 {
		return 0
	}
	limit := int64(c.p.Window)
	if q.QoS == domain.EOIO {
		limit = 1
	}
	return limit - q.Counts[domain.StatusDLNG]
}

// due claims the WAIT messages whose next attempt is due, and finds when
// the next one will be.
func (c *claimer) due() error {
	cur := c.t.bucket(bucketDue).Cursor()
	var keys [][]byte
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		at := time.UnixMicro(int64(binary.BigEndian.Uint64(k[:8]))).UTC()
		if at.After(c.now) {
			c.res.NextDue = at
			break
		}
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if c.done {
			c.res.More = true
			return nil
		}
		m, err := c.t.stored(uuid.UUID(k[8:]))
		if err != nil {
			return fmt.Errorf("due index names a missing message: %w", err)
		}
		if c.full(m.Stage) {
			c.res.More = true
			continue
		}
		q, err := c.queue(m.Queue)
		if err != nil {
			return err
		}
		if c.room(q) <= 0 {
			continue
		}
		if err := c.take(m); err != nil {
			return err
		}
	}
	return nil
}

// ready claims TBDL messages queue by queue: the head of an EOIO queue
// whose head is TBDL and nothing in flight, the first TBDL messages of an
// EO queue up to its window unless it WAITs.
func (c *claimer) ready(start string) error {
	b := c.t.bucket(bucketReady)
	cur := b.Cursor()
	visit := func(from, to []byte) error {
		for k, _ := cur.Seek(from); k != nil && (to == nil || bytes.Compare(k, to) < 0); {
			if c.done {
				c.res.More = true // perhaps: another queue has TBDL messages
				return nil
			}
			i := bytes.IndexByte(k, sep)
			if i < 0 {
				return fmt.Errorf("ready index: malformed key %x", k)
			}
			name := string(k[:i])
			if err := c.readyQueue(name); err != nil {
				return err
			}
			// Past the last key of this queue: a longer name that starts
			// alike sorts after name 0x01.
			k, _ = cur.Seek(append([]byte(name), sep+1))
		}
		return nil
	}
	if err := visit([]byte(start), nil); err != nil {
		return err
	}
	if start != "" {
		return visit(nil, []byte(start))
	}
	return nil
}

// readyQueue claims what it may of one queue's TBDL messages.
func (c *claimer) readyQueue(name string) error {
	q, err := c.queue(name)
	if err != nil {
		return err
	}
	if c.full(q.Stage) {
		c.res.More = true
		return nil
	}
	room := c.room(q)
	if room <= 0 || (q.Counts[domain.StatusWAIT] > 0) {
		return nil // a WAIT message holds the queue; it is claimed when due
	}
	var ids []uuid.UUID
	prefix := prefixOf(name)
	cur := c.t.bucket(bucketReady).Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && int64(len(ids)) < room; k, v = cur.Next() {
		ids = append(ids, uuid.UUID(v))
	}
	for _, id := range ids {
		if c.done || c.full(q.Stage) {
			c.res.More = true
			return nil
		}
		m, err := c.t.stored(id)
		if err != nil {
			return fmt.Errorf("ready index names a missing message: %w", err)
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

// take claims one ready message, minding blacklist candidates.
func (c *claimer) take(m storedMessage) error {
	candidate := m.Crashes > 0 && c.p.Candidates != store.CandidatesAsAny
	switch {
	case candidate && c.p.Candidates == store.CandidatesSkip:
		c.res.Candidates++
		return nil
	case !candidate && c.p.Candidates == store.CandidatesAlone:
		return nil
	}
	attempt := m.Attempts + 1
	reason := fmt.Sprintf("delivery attempt %d", attempt)
	if m.Stage == domain.Inbound {
		reason = "receiver determination"
	}
	node := c.p.Node
	after, err := c.t.transition(idOf(m.ID), m, domain.StatusDLNG, func(m *domain.Message) {
		m.Attempts, m.Node, m.Incarnation, m.NextAttemptAt = attempt, node.ID, node.Incarnation, nil
	}, store.EngineEntry(c.now, node, reason))
	if err != nil {
		return err
	}
	cl := store.Claimed{Message: after, Epoch: c.t.epoch()}
	if after.Stage == domain.Outbound {
		if cl.Payload, err = c.t.Payload(after.ID); err != nil {
			return err
		}
		c.outbound++
	} else {
		c.inbound++
	}
	c.res.Claimed = append(c.res.Claimed, cl)
	delete(c.queues, after.Queue) // its counts changed
	c.last = after.Queue
	c.done = (c.full(domain.Inbound) && c.full(domain.Outbound)) || c.p.Candidates == store.CandidatesAlone
	return nil
}
