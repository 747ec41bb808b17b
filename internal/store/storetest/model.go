package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// model is what a store must hold after a run of operations, kept by the
// test in plain maps.
type model struct {
	msgs    map[string]*modelMessage
	lastSeq map[string]uint64 // the queues that exist, with their last seq
}

type modelMessage struct {
	queue  string
	qos    domain.QoS
	status domain.Status
	class  domain.ErrorClass
	seq    uint64
}

func (md *model) clone() *model {
	c := &model{msgs: map[string]*modelMessage{}, lastSeq: maps.Clone(md.lastSeq)}
	for id, m := range md.msgs {
		mm := *m
		c.msgs[id] = &mm
	}
	return c
}

// op is one operation of a random run and the outcome the model expects.
type op struct {
	name    string
	run     func(w store.Writer) error
	wantErr error // nil, domain.ErrConflict
}

func testConsistency(t *testing.T, open Opener) {
	t.Run("RandomOperationsMatchAModel", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		rng := rand.New(rand.NewPCG(7, 11))
		queues := []*domain.Message{
			NewMessage(), InQueue(NewMessage(), domain.EOInboundQueue(domain.RoleCentral, 1)),
			NewEOIOMessage("ORDERS"), NewEOIOMessage("INVOICES"),
		}
		md := &model{msgs: map[string]*modelMessage{}, lastSeq: map[string]uint64{}}
		for round := range 80 {
			next := md.clone()
			var ops []op
			for range 1 + rng.IntN(6) {
				ops = append(ops, randomOp(rng, next, queues))
			}
			rollback := rng.IntN(7) == 0
			err := b.store.Update(b.ctx, func(w store.Writer) error {
				for i, o := range ops {
					if err := o.run(w); !errors.Is(err, o.wantErr) {
						return fmt.Errorf("round %d, op %d (%s): got error %v, want %v", round, i, o.name, err, o.wantErr)
					}
				}
				if rollback {
					return errRollback
				}
				return nil
			})
			if rollback {
				require.ErrorIs(t, err, errRollback)
			} else {
				require.NoError(t, err)
				md = next
			}
			if round%10 == 9 {
				requireModel(t, b, md)
				requireConsistent(t, b)
			}
		}
	})
}

// randomOp draws an operation, applies its expected effect to md and
// returns it. Some transitions name a wrong status on purpose: they must
// lose, and the Update must go on.
func randomOp(rng *rand.Rand, md *model, queues []*domain.Message) op {
	ids := slices.Sorted(maps.Keys(md.msgs))
	switch n := rng.IntN(10); {
	case n < 4 || len(ids) == 0:
		proto := queues[rng.IntN(len(queues))]
		m := NewMessage()
		m.QoS, m.Queue, m.AppQueue, m.Sender = proto.QoS, proto.Queue, proto.AppQueue, proto.Sender
		m.Status = []domain.Status{domain.StatusTBDL, domain.StatusTBDL, domain.StatusPEND, domain.StatusWAIT, domain.StatusNDLV, domain.StatusDLVD}[rng.IntN(6)]
		if m.Status == domain.StatusNDLV {
			m.ErrorClass = []domain.ErrorClass{domain.ErrorPermanent, domain.ErrorTransient}[rng.IntN(2)]
		}
		mm := &modelMessage{queue: m.Queue, qos: m.QoS, status: m.Status, class: m.ErrorClass}
		if m.Status != domain.StatusPEND {
			md.lastSeq[m.Queue]++
			mm.seq = md.lastSeq[m.Queue]
		} else if _, ok := md.lastSeq[m.Queue]; !ok {
			md.lastSeq[m.Queue] = 0
		}
		md.msgs[m.ID] = mm
		return op{name: "insert " + string(m.Status), run: func(w store.Writer) error {
			return w.Insert(m.Clone(), PayloadOf(m), Entry("received"))
		}}
	case n < 9:
		id := ids[rng.IntN(len(ids))]
		mm := md.msgs[id]
		to := domain.Statuses[1+rng.IntN(len(domain.Statuses)-1)]
		from := mm.status
		if rng.IntN(6) == 0 {
			from = domain.Statuses[rng.IntN(len(domain.Statuses))]
		}
		class := []domain.ErrorClass{domain.ErrorPermanent, domain.ErrorTransient, domain.ErrorCrash}[rng.IntN(3)]
		p := store.TransitionParams{ID: id, From: []domain.Status{from}, To: to, History: Entry("random"),
			Update: func(m *domain.Message) { m.ErrorClass = class }}
		o := op{name: fmt.Sprintf("%s to %s, expecting %s", from, to, mm.status), run: func(w store.Writer) error {
			_, err := w.Transition(p)
			return err
		}}
		if from != mm.status {
			o.wantErr = domain.ErrConflict
			return o
		}
		if mm.status == domain.StatusPEND {
			md.lastSeq[mm.queue]++
			mm.seq = md.lastSeq[mm.queue]
		}
		mm.status, mm.class = to, class
		return o
	default:
		id := ids[rng.IntN(len(ids))]
		delete(md.msgs, id)
		return op{name: "delete", run: func(w store.Writer) error { return w.Delete(id) }}
	}
}

// requireModel checks the store against the model.
func requireModel(t *testing.T, b *testBundle, md *model) {
	t.Helper()
	s := b.snapshot(t)
	require.Equal(t, slices.Sorted(maps.Keys(md.msgs)), idsOf(s.messages...), "the messages")
	// An EOIO queue numbers its messages 1, 2, 3...; an EO queue's
	// numbers only increase (they may come from a sequence that queues
	// share): the model's order is checked, not its numbers.
	stored := map[string][]*domain.Message{}
	for _, m := range s.messages {
		want := md.msgs[m.ID]
		require.Equal(t, want.status, m.Status, "message %s: status", m.ID)
		require.Equal(t, want.seq == 0, m.Seq == 0, "message %s: seq %d, the model's %d", m.ID, m.Seq, want.seq)
		if want.qos == domain.EOIO {
			require.Equal(t, want.seq, m.Seq, "message %s: seq", m.ID)
		}
		if m.Seq > 0 {
			stored[m.Queue] = append(stored[m.Queue], m)
		}
	}
	for queue, msgs := range stored {
		byStore := slices.SortedFunc(slices.Values(msgs), func(a, b *domain.Message) int { return cmp.Compare(a.Seq, b.Seq) })
		byModel := slices.SortedFunc(slices.Values(msgs), func(a, b *domain.Message) int {
			return cmp.Compare(md.msgs[a.ID].seq, md.msgs[b.ID].seq)
		})
		require.Equal(t, idsOf(byModel...), idsOf(byStore...), "queue %s: the order of its messages", queue)
	}
	require.Equal(t, slices.Sorted(maps.Keys(md.lastSeq)), queueNames(s.queues), "the queues")
	for _, q := range s.queues {
		if q.QoS == domain.EOIO {
			require.Equal(t, md.lastSeq[q.Name], q.LastSeq, "queue %s: last seq", q.Name)
		} else if msgs := stored[q.Name]; len(msgs) > 0 {
			require.GreaterOrEqual(t, q.LastSeq, slices.MaxFunc(msgs, func(a, b *domain.Message) int { return cmp.Compare(a.Seq, b.Seq) }).Seq,
				"queue %s: last seq", q.Name)
		}
		counts := map[domain.Status]int64{}
		var open []*modelMessage
		for _, m := range md.msgs {
			if m.queue != q.Name {
				continue
			}
			counts[m.status]++
			if isOpen(m.status) {
				open = append(open, m)
			}
		}
		require.Equal(t, counts, nonZero(q.Counts), "queue %s: counts", q.Name)
		slices.SortFunc(open, func(a, b *modelMessage) int { return cmp.Compare(a.seq, b.seq) })
		want, rank := "", -1
		for _, m := range open {
			if r := headRank(m.qos, m.status, m.class); r > rank {
				want, rank = seqID(md, q.Name, m.seq), r
			}
		}
		require.Equal(t, want, s.heads[q.Name], "queue %s: head", q.Name)
	}
}

func seqID(md *model, queue string, seq uint64) string {
	for id, m := range md.msgs {
		if m.queue == queue && m.seq == seq {
			return id
		}
	}
	return ""
}

func queueNames(qs []*store.QueueRecord) []string {
	names := []string{}
	for _, q := range qs {
		names = append(names, q.Name)
	}
	return names
}
