package store_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// racingStore runs race once, in a transaction of its own, just before the
// first Update it is asked for: what another process does between Purge's
// read and its delete.
type racingStore struct {
	store.Store
	once sync.Once
	race func(w store.Writer) error
}

func (s *racingStore) Update(ctx context.Context, fn func(store.Writer) error) error {
	var err error
	s.once.Do(func() { err = s.Store.Update(ctx, s.race) })
	if err != nil {
		return err
	}
	return s.Store.Update(ctx, fn)
}

// TestPurgeCountsWhatItDeleted: a message deleted between Purge's read and
// its write is neither counted nor in the batch's ids.
func TestPurgeCountsWhatItDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		ids = ids[:0]
		for range 3 {
			id := uuid.Must(uuid.NewV7()).String()
			m := &domain.Message{ID: id, QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Queue: "XBTI0000",
				Stage: domain.Inbound, Status: domain.StatusDLVD, CreatedAt: old, UpdatedAt: old}
			if err := w.Insert(m, nil, domain.HistoryEntry{At: old, Actor: "test"}); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	}))

	rs := &racingStore{Store: st, race: func(w store.Writer) error { return w.Delete(ids[1]) }}
	var batches [][]string
	n, err := store.Purge(ctx, rs, domain.StatusDLVD, old.Add(time.Hour), false, func(_ store.Writer, deleted []string) error {
		batches = append(batches, deleted)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 2, n, "the message deleted meanwhile is not counted")
	require.Equal(t, [][]string{{ids[0], ids[2]}}, batches)
}
