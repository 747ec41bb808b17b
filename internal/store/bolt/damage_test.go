package bolt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// damageDataPages overwrites n bytes at places in the file's data pages
// (every page past the two meta pages, up to the high water mark) that a
// seeded random source picks, as a failing disk or a stray write would.
func damageDataPages(t *testing.T, path string, seed uint64, n int) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	var size int64
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		size = tx.Size()
		return nil
	}))
	require.NoError(t, db.Close())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	rng := rand.New(rand.NewPCG(seed, 1))
	first := int64(2 * os.Getpagesize())
	for range n {
		_, err := f.WriteAt([]byte{byte(rng.Uint32())}, first+rng.Int64N(size-first))
		require.NoError(t, err)
	}
}

// readAll reads everything a command can read from the store, each read in
// a transaction of its own, and returns the first error.
func readAll(t *testing.T, s *Store) error {
	ctx := t.Context()
	var ids []string
	err := s.View(ctx, func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	if err != nil {
		return err
	}
	reads := []func(r store.Reader) error{
		func(r store.Reader) error { return r.Queues("", func(*store.QueueRecord) error { return nil }) },
		func(r store.Reader) error {
			return r.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV, domain.StatusTBDL}},
				func(*domain.Message) error { return nil })
		},
		func(r store.Reader) error {
			return r.Audit(store.AuditFilter{}, func(*domain.AuditEntry) error { return nil })
		},
		func(r store.Reader) error { return r.Params(func(domain.Param) error { return nil }) },
	}
	for _, id := range ids {
		reads = append(reads, func(r store.Reader) error {
			if _, err := r.History(id); err != nil {
				return err
			}
			_, err := r.Payload(id)
			return err
		})
	}
	for _, read := range reads {
		if err := s.View(ctx, read); err != nil {
			return err
		}
	}
	return s.Update(ctx, func(w store.Writer) error {
		m := storetest.NewMessage()
		return w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received"))
	})
}

// TestDamagedStore damages a store's data pages at random, 40 places for
// each of 24 seeds, and reads it through: every failure is the store's
// damaged error (exit 6), never a panic or a memory fault, which would end
// the test binary.
func TestDamagedStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.db")
	realStore(t, sound)
	data, err := os.ReadFile(sound)
	require.NoError(t, err)

	found := 0
	for seed := range uint64(24) {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("damaged-%d.db", seed))
			require.NoError(t, os.WriteFile(path, data, 0o600))
			damageDataPages(t, path, seed, 40)
			s, err := Open(path, Options{NoSync: true})
			if err == nil {
				err = readAll(t, s)
				require.NoError(t, s.Close())
			}
			if err == nil {
				return // the damage hit no page a read uses: free pages, payload bytes
			}
			found++
			require.True(t, errors.Is(err, ErrDamaged) || errors.Is(err, ErrNotStore), "%v", err)
			if errors.Is(err, ErrDamaged) {
				require.ErrorIs(t, err, domain.ErrUnavailable)
				require.ErrorContains(t, err, "the store "+path+" is damaged: ")
				require.NotErrorIs(t, err, domain.ErrNotFound)
			}
		})
	}
	// Most seeds hit something: the test damages what reads use.
	t.Logf("%d of 24 damaged stores were found damaged", found)
	require.GreaterOrEqual(t, found, 20)
}

// TestPanicIsNotDamage keeps a bug a bug: a panic that bbolt did not raise
// is not reported as damage to the store.
func TestPanicIsNotDamage(t *testing.T) {
	t.Parallel()
	s := openTestStore(t)
	require.PanicsWithValue(t, "a bug", func() {
		_ = s.View(t.Context(), func(store.Reader) error { panic("a bug") })
	})
	var m map[string]int
	require.Panics(t, func() {
		_ = s.View(t.Context(), func(store.Reader) error {
			m["x"] = 1 // assignment to a nil map
			return nil
		})
	})
	// The store is still usable.
	require.NoError(t, s.View(t.Context(), func(store.Reader) error { return nil }))
}
