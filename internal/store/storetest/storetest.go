// Package storetest is the conformance suite of store.Store. Every store
// implementation runs it from its own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openTestStore(t) })
//	}
//
// New store behaviour is specified here first, so that the bbolt and the
// PostgreSQL store cannot drift apart.
package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Opener opens a new, empty store for one test. It closes the store (and
// checks it, where the store can) through t.Cleanup; the suite never closes
// a store itself.
type Opener func(t *testing.T) store.Store

// Run runs the whole suite against the stores open returns. Every test gets
// a store of its own and runs in parallel with the others.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"Insert", testInsert},
		{"Transition", testTransition},
		{"Delete", testDelete},
		{"DeleteQueue", testDeleteQueue},
		{"Transaction", testTransaction},
		{"Concurrency", testConcurrency},
		{"Copies", testCopies},
		{"Messages", testMessages},
		{"QueueMessages", testQueueMessages},
		{"Head", testHead},
		{"Queues", testQueues},
		{"Params", testParams},
		{"Audit", testAudit},
		{"AuditRetention", testAuditRetention},
		{"Prepared", testPrepared},
		{"Consistency", testConsistency},
		{"EOIO", testEOIO},
		{"Move", testMove},
		{"Lanes", testLanes},
		{"Keys", testKeys},
		{"ReceiverCodes", testReceiverCodes},
		{"EditPayload", testEditPayload},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t, open)
		})
	}
}

// testBundle is what one test works with.
type testBundle struct {
	ctx   context.Context
	store store.Store
}

func setup(t *testing.T, open Opener) *testBundle {
	t.Helper()
	return &testBundle{ctx: t.Context(), store: open(t)}
}

// update runs fn in an Update that must succeed.
func (b *testBundle) update(t *testing.T, fn func(w store.Writer) error) {
	t.Helper()
	require.NoError(t, b.store.Update(b.ctx, fn))
}

// view runs fn in a View that must succeed.
func (b *testBundle) view(t *testing.T, fn func(r store.Reader) error) {
	t.Helper()
	require.NoError(t, b.store.View(b.ctx, fn))
}

// insert stores messages, each with PayloadOf as payload, in one Update.
func (b *testBundle) insert(t *testing.T, msgs ...*domain.Message) {
	t.Helper()
	b.update(t, func(w store.Writer) error {
		for _, m := range msgs {
			if err := w.Insert(m, PayloadOf(m), Entry("received")); err != nil {
				return err
			}
		}
		return nil
	})
}

// transition runs one Transition in its own Update.
func (b *testBundle) transition(t *testing.T, p store.TransitionParams) (*domain.Message, error) {
	t.Helper()
	var out *domain.Message
	err := b.store.Update(b.ctx, func(w store.Writer) error {
		m, err := w.Transition(p)
		out = m
		return err
	})
	return out, err
}

// move changes a message's status from its current one, which must succeed.
func (b *testBundle) move(t *testing.T, id string, from, to domain.Status) *domain.Message {
	t.Helper()
	m, err := b.transition(t, store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, History: Entry("moved")})
	require.NoError(t, err)
	return m
}

func (b *testBundle) message(t *testing.T, id string) *domain.Message {
	t.Helper()
	var m *domain.Message
	b.view(t, func(r store.Reader) error {
		var err error
		m, err = r.Message(id)
		return err
	})
	return m
}

func (b *testBundle) payload(t *testing.T, id string) []byte {
	t.Helper()
	var p []byte
	b.view(t, func(r store.Reader) error {
		var err error
		p, err = r.Payload(id)
		return err
	})
	return p
}

func (b *testBundle) history(t *testing.T, id string) []domain.HistoryEntry {
	t.Helper()
	var h []domain.HistoryEntry
	b.view(t, func(r store.Reader) error {
		var err error
		h, err = r.History(id)
		return err
	})
	return h
}

func (b *testBundle) queue(t *testing.T, name string) *store.QueueRecord {
	t.Helper()
	var q *store.QueueRecord
	b.view(t, func(r store.Reader) error {
		var err error
		q, err = r.Queue(name)
		return err
	})
	return q
}

// counts returns a queue's counters without the statuses at zero, so that
// an absent status and one kept at zero compare alike.
func (b *testBundle) counts(t *testing.T, queue string) map[domain.Status]int64 {
	t.Helper()
	return nonZero(b.queue(t, queue).Counts)
}

// ids returns the ids Messages hands out for f, in order.
func (b *testBundle) ids(t *testing.T, f store.MessageFilter) []string {
	t.Helper()
	ids := []string{}
	b.view(t, func(r store.Reader) error {
		return r.Messages(f, func(m *domain.Message) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	return ids
}

// queueIDs returns the ids QueueMessages hands out, in order.
func (b *testBundle) queueIDs(t *testing.T, queue string, p store.QueueMessagesParams) []string {
	t.Helper()
	ids := []string{}
	b.view(t, func(r store.Reader) error {
		return r.QueueMessages(queue, p, func(m *domain.Message) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	return ids
}

// head returns the queue's head message, or nil.
func (b *testBundle) head(t *testing.T, queue string) *domain.Message {
	t.Helper()
	var h *domain.Message
	b.view(t, func(r store.Reader) error {
		var err error
		h, err = r.Head(queue)
		return err
	})
	return h
}

// headID returns the queue's head message id, or "" when it has none.
func (b *testBundle) headID(t *testing.T, queue string) string {
	t.Helper()
	if h := b.head(t, queue); h != nil {
		return h.ID
	}
	return ""
}

func nonZero(counts map[domain.Status]int64) map[domain.Status]int64 {
	out := map[domain.Status]int64{}
	for s, n := range counts {
		if n != 0 {
			out[s] = n
		}
	}
	return out
}

func idsOf(msgs ...*domain.Message) []string {
	ids := []string{}
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	return ids
}
