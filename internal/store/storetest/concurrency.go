package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func testConcurrency(t *testing.T, open Opener) {
	t.Run("ConcurrentUpdatesAllLand", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		const workers, perWorker, queues = 16, 20, 4
		errs := make(chan error, workers*perWorker)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					m := InQueue(NewMessage(), domain.EOInboundQueue(domain.RoleCentral, (w+i)%queues))
					err := b.store.Update(b.ctx, func(wr store.Writer) error {
						if err := wr.Insert(m.Clone(), PayloadOf(m), Entry("received")); err != nil {
							return err
						}
						if i%2 == 1 {
							return nil
						}
						_, err := wr.Transition(tp(m.ID, domain.StatusTBDL, domain.StatusDLNG))
						return err
					})
					if err != nil {
						errs <- fmt.Errorf("worker %d, update %d: %w", w, i, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}

		var total int64
		for n := range queues {
			queue := domain.EOInboundQueue(domain.RoleCentral, n)
			q := b.queue(t, queue)
			count := q.Counts[domain.StatusTBDL] + q.Counts[domain.StatusDLNG]
			total += count
			require.GreaterOrEqual(t, q.LastSeq, uint64(count), "queue %s", queue)
			var seqs []uint64
			b.view(t, func(r store.Reader) error {
				return r.QueueMessages(queue, store.QueueMessagesParams{}, func(m *domain.Message) error {
					seqs = append(seqs, m.Seq)
					return nil
				})
			})
			for i, seq := range seqs {
				if i > 0 {
					require.Less(t, seqs[i-1], seq, "queue %s: seqs increase, without repeats", queue)
				}
			}
			require.Len(t, seqs, int(count))
			require.Equal(t, seqs[len(seqs)-1], q.LastSeq, "queue %s: the last seq given out", queue)
		}
		require.Equal(t, int64(workers*perWorker), total)
		require.Len(t, b.ids(t, store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}), workers*perWorker/2)
		requireConsistent(t, b)
	})

	t.Run("CompareAndSetHasOneWinner", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage()
		b.insert(t, m)
		const racers = 16
		results := make(chan error, racers)
		var wg sync.WaitGroup
		for n := range racers {
			wg.Go(func() {
				err := b.store.Update(b.ctx, func(w store.Writer) error {
					_, err := w.Transition(store.TransitionParams{
						ID: m.ID, From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG,
						History: domain.HistoryEntry{Node: fmt.Sprintf("node-%d", n), Actor: "engine"},
					})
					return err
				})
				results <- err
			})
		}
		wg.Wait()
		close(results)
		won := 0
		for err := range results {
			if err == nil {
				won++
				continue
			}
			require.ErrorIs(t, err, domain.ErrConflict)
			require.ErrorContains(t, err, "DLNG")
		}
		require.Equal(t, 1, won, "exactly one compare-and-set wins")
		require.Len(t, b.history(t, m.ID), 2)
		require.Equal(t, map[domain.Status]int64{domain.StatusDLNG: 1}, b.counts(t, m.Queue))
	})

	t.Run("ReadersSeeWholeCommits", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		const writers, updates, batch = 4, 8, 10
		queue := NewMessage().Queue
		done := make(chan struct{})
		errs := make(chan error, writers+1)
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				for range updates {
					err := b.store.Update(b.ctx, func(w store.Writer) error {
						for range batch {
							m := NewMessage()
							if err := w.Insert(m, PayloadOf(m), Entry("received")); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		var reads sync.WaitGroup
		reads.Go(func() {
			for {
				err := b.store.View(b.ctx, func(r store.Reader) error {
					var listed int64
					if err := r.Messages(store.MessageFilter{}, func(*domain.Message) error { listed++; return nil }); err != nil {
						return err
					}
					q, err := r.Queue(queue)
					if errors.Is(err, domain.ErrNotFound) && listed == 0 {
						return nil
					}
					if err != nil {
						return err
					}
					if counted := q.Counts[domain.StatusTBDL]; counted != listed || listed%batch != 0 {
						return fmt.Errorf("a read saw %d messages listed and %d counted, not whole updates of %d", listed, counted, batch)
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
		wg.Wait()
		close(done)
		reads.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, int64(writers*updates*batch), b.queue(t, queue).Counts[domain.StatusTBDL])
	})
}
