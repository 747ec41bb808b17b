package storetest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// snapshot is everything a store tells about its messages and queues, read
// in one View so that its parts must agree.
type snapshot struct {
	messages  []*domain.Message
	payloads  map[string]int
	histories map[string][]domain.HistoryEntry
	queues    []*store.QueueRecord
	byStatus  map[domain.Status][]string
	queueAll  map[string][]*domain.Message
	queueOpen map[string][]string
	// appOpen holds, by queue and app queue, the open messages that
	// QueueMessages selects by app queue.
	appOpen map[[2]string][]string
	heads   map[string]string
}

func (b *testBundle) snapshot(t *testing.T) *snapshot {
	t.Helper()
	s := &snapshot{
		payloads:  map[string]int{},
		histories: map[string][]domain.HistoryEntry{},
		byStatus:  map[domain.Status][]string{},
		queueAll:  map[string][]*domain.Message{},
		queueOpen: map[string][]string{},
		appOpen:   map[[2]string][]string{},
		heads:     map[string]string{},
	}
	b.view(t, func(r store.Reader) error {
		if err := r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			s.messages = append(s.messages, m)
			return nil
		}); err != nil {
			return err
		}
		for _, m := range s.messages {
			p, err := r.Payload(m.ID)
			if err != nil {
				return err
			}
			s.payloads[m.ID] = len(p)
			if s.histories[m.ID], err = r.History(m.ID); err != nil {
				return err
			}
		}
		for _, st := range domain.Statuses {
			s.byStatus[st] = []string{}
			if err := r.Messages(store.MessageFilter{Statuses: []domain.Status{st}}, func(m *domain.Message) error {
				s.byStatus[st] = append(s.byStatus[st], m.ID)
				return nil
			}); err != nil {
				return err
			}
		}
		if err := r.Queues("", func(q *store.QueueRecord) error {
			s.queues = append(s.queues, q)
			return nil
		}); err != nil {
			return err
		}
		for _, q := range s.queues {
			s.queueAll[q.Name], s.queueOpen[q.Name] = []*domain.Message{}, []string{}
			if err := r.QueueMessages(q.Name, store.QueueMessagesParams{}, func(m *domain.Message) error {
				s.queueAll[q.Name] = append(s.queueAll[q.Name], m)
				return nil
			}); err != nil {
				return err
			}
			if err := r.QueueMessages(q.Name, store.QueueMessagesParams{Open: true}, func(m *domain.Message) error {
				s.queueOpen[q.Name] = append(s.queueOpen[q.Name], m.ID)
				return nil
			}); err != nil {
				return err
			}
			for _, m := range s.messages {
				key := [2]string{q.Name, m.AppQueue}
				if m.Queue != q.Name || m.AppQueue == "" || s.appOpen[key] != nil {
					continue
				}
				s.appOpen[key] = []string{}
				err := r.QueueMessages(q.Name, store.QueueMessagesParams{Open: true, AppQueue: m.AppQueue}, func(m *domain.Message) error {
					s.appOpen[key] = append(s.appOpen[key], m.ID)
					return nil
				})
				if err != nil {
					return err
				}
			}
			head, err := r.Head(q.Name)
			if err != nil {
				return err
			}
			if head != nil {
				s.heads[q.Name] = head.ID
			}
		}
		return nil
	})
	return s
}

// isOpen reports whether a message in status s takes part in its queue's
// delivery order.
func isOpen(s domain.Status) bool {
	return s != domain.StatusPEND && !s.Final()
}

// headRank is the rank of a message as its queue's head: that of
// domain.HeadPriority for an open message, below every rank for one that
// is not open.
func headRank(qos domain.QoS, s domain.Status, c domain.ErrorClass) int {
	if !isOpen(s) {
		return -2
	}
	return domain.HeadPriority(qos, s, c)
}

// requireConsistent checks that the counters, the status index, the queue
// orders, the heads and the histories agree with the messages themselves.
func requireConsistent(t *testing.T, b *testBundle) {
	t.Helper()
	s := b.snapshot(t)

	byQueue := map[string][]*domain.Message{}
	for i, m := range s.messages {
		if i > 0 {
			require.Less(t, s.messages[i-1].ID, m.ID, "messages come in id order")
		}
		byQueue[m.Queue] = append(byQueue[m.Queue], m)
		require.Equal(t, int64(s.payloads[m.ID]), m.Size, "message %s: size is the payload's", m.ID)
		h := s.histories[m.ID]
		require.NotEmpty(t, h, "message %s has history", m.ID)
		require.Empty(t, h[0].From, "message %s: first history entry", m.ID)
		for j := 1; j < len(h); j++ {
			require.Equal(t, h[j-1].To, h[j].From, "message %s: history entry %d follows the one before", m.ID, j)
		}
		require.Equal(t, m.Status, h[len(h)-1].To, "message %s: the last history entry is the status", m.ID)
		require.Equal(t, m.Status == domain.StatusPEND, m.Seq == 0, "message %s in %s has seq %d", m.ID, m.Status, m.Seq)
	}
	for _, st := range domain.Statuses {
		want := []string{}
		for _, m := range s.messages {
			if m.Status == st {
				want = append(want, m.ID)
			}
		}
		require.Equal(t, want, s.byStatus[st], "status index of %s", st)
	}

	var queueNames []string
	for _, q := range s.queues {
		queueNames = append(queueNames, q.Name)
		msgs := byQueue[q.Name]
		counts := map[domain.Status]int64{}
		var passedOver, stuck int64
		for _, m := range s.messages {
			if m.InboundQueue == q.Name {
				counts[domain.StatusDLVD]++ // moved on by routing: it passed through (§3)
			}
		}
		for _, m := range msgs {
			counts[m.Status]++
			if domain.PassedOver(m.QoS, m.Status, m.ErrorClass) {
				passedOver++
			}
			if domain.CountsStuck(m) {
				stuck++
			}
		}
		require.Equal(t, passedOver, q.PassedOver, "queue %s: messages passed over", q.Name)
		require.Equal(t, stuck, q.Stuck, "queue %s: stuck transactions", q.Name)
		for st, n := range q.Counts {
			require.Positive(t, n, "queue %s: count of %s", q.Name, st)
		}
		require.Equal(t, counts, nonZero(q.Counts), "queue %s: counts", q.Name)

		inOrder := slices.DeleteFunc(slices.Clone(msgs), func(m *domain.Message) bool { return m.Seq == 0 })
		slices.SortFunc(inOrder, func(a, b *domain.Message) int { return cmp.Compare(a.Seq, b.Seq) })
		require.Equal(t, idsOf(inOrder...), idsOf(s.queueAll[q.Name]...), "queue %s: seq order", q.Name)
		wantOpen, wantHead, rank := []string{}, "", -1
		for i, m := range inOrder {
			if i > 0 {
				require.Less(t, inOrder[i-1].Seq, m.Seq, "queue %s: seqs are unique", q.Name)
			}
			require.LessOrEqual(t, m.Seq, q.LastSeq, "queue %s: seq of %s", q.Name, m.ID)
			if isOpen(m.Status) {
				wantOpen = append(wantOpen, m.ID)
			}
			if r := headRank(m.QoS, m.Status, m.ErrorClass); r > rank {
				wantHead, rank = m.ID, r
			}
		}
		require.Equal(t, wantOpen, s.queueOpen[q.Name], "queue %s: open order", q.Name)
		for key, got := range s.appOpen {
			if key[0] != q.Name {
				continue
			}
			want := []string{}
			for _, m := range inOrder {
				if isOpen(m.Status) && m.AppQueue == key[1] {
					want = append(want, m.ID)
				}
			}
			require.Equal(t, want, got, "queue %s: open messages of app queue %s", q.Name, key[1])
		}
		require.Equal(t, wantHead, s.heads[q.Name], "queue %s: head", q.Name)
	}
	require.True(t, slices.IsSorted(queueNames), "queues come in name order")
	for name := range byQueue {
		require.Contains(t, queueNames, name, "the queue of every message has a record")
	}
}
