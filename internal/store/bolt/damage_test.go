package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
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

// usedPages lists the pages of a file that hold its buckets: branch and
// leaf pages with their overflow pages, not the meta pages, the freelist
// or free pages.
func usedPages(t *testing.T, path string) []int64 {
	t.Helper()
	// Read-write, for bbolt to load the freelist (tx.Page); nothing is written.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	var used []int64
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for id := 2; ; id++ {
			p, err := tx.Page(id)
			if err != nil || p == nil {
				return err
			}
			if p.Type == "branch" || p.Type == "leaf" {
				for i := range p.OverflowCount + 1 {
					used = append(used, int64(id+i))
				}
				id += p.OverflowCount
			}
		}
	}))
	return used
}

// flipBits flips n bits of the file's used pages (usedPages), at places a
// source seeded with seed picks: the pages a read walks, anywhere in them.
func flipBits(t *testing.T, path string, used []int64, seed uint64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	rng := rand.New(rand.NewPCG(seed, 2))
	pageSize := int64(os.Getpagesize())
	for range n {
		at := used[rng.IntN(len(used))]*pageSize + rng.Int64N(pageSize)
		b := make([]byte, 1)
		_, err := f.ReadAt(b, at)
		require.NoError(t, err)
		b[0] ^= 1 << rng.IntN(8)
		_, err = f.WriteAt(b, at)
		require.NoError(t, err)
	}
}

// soundClock is the clock of soundStore: fixed, so that the file it makes is
// the same in every run.
func soundClock() time.Time { return storetest.At(0) }

// soundID is the i-th message id of soundStore: UUIDv7-shaped, ordered,
// the same in every run.
func soundID(i int) string {
	var u uuid.UUID
	binary.BigEndian.PutUint64(u[:8], 0x0197_2a00_0000_7000|uint64(i)<<16)
	binary.BigEndian.PutUint64(u[8:], 0x8000_0000_0000_0000|uint64(i)*0x9e37_79b9)
	return u.String()
}

// soundStore writes a store that holds what every kind of read reads —
// EO and EOIO messages in several statuses with histories of a few
// entries, payloads, an idempotency key, audit entries and tuning values —
// in the same bytes in every run, so that damage a seed makes is the same
// damage in every run.
func soundStore(t *testing.T, path string) {
	t.Helper()
	s, err := Open(path, Options{NoSync: true, Clock: soundClock})
	require.NoError(t, err)
	ctx := t.Context()
	for batch := range 6 {
		require.NoError(t, s.Update(ctx, func(w store.Writer) error {
			for j := range 50 {
				i := batch*50 + j
				m := storetest.NewMessage()
				if i%3 == 1 {
					m = storetest.NewEOIOMessage(fmt.Sprintf("APP%d", i%4))
				}
				m.ID, m.CreatedAt, m.UpdatedAt = soundID(i), storetest.At(i), storetest.At(i)
				if i == 6 {
					m.Key = "order-6"
				}
				if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, s.Update(ctx, func(w store.Writer) error {
		for i := 0; i < 300; i += 2 {
			id := soundID(i)
			if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusTBDL},
				To: domain.StatusDLNG, History: storetest.Entry("delivery attempt 1"),
				Update: func(m *domain.Message) { m.Attempts, m.Node = 1, "N1" }}); err != nil {
				return err
			}
			to, class, reason := domain.StatusDLVD, domain.ErrorClass(""), "delivered"
			if i%10 == 4 {
				to, class, reason = domain.StatusNDLV, domain.ErrorPermanent, "HTTP 422"
			}
			if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{domain.StatusDLNG},
				To: to, History: storetest.Entry(reason), Update: func(m *domain.Message) {
					if class != "" {
						m.Error, m.ErrorClass = reason, class
					}
				}}); err != nil {
				return err
			}
		}
		for i := range 5 {
			if err := w.AppendAudit(&domain.AuditEntry{Actor: "ops", Action: "message resend",
				Targets: []string{soundID(i)}, Result: "ok"}); err != nil {
				return err
			}
		}
		return w.SetParam(domain.Param{Name: "EO_OUTBOUND_PARALLEL", Value: 4})
	}))
	require.NoError(t, s.Close())
	// The store allocates pages from a hash map and writes the buckets a
	// commit changed in no fixed order: a copy into a new file, one bucket
	// per commit, key by key, is the same in every run.
	tmp := path + ".tmp"
	require.NoError(t, os.Rename(path, tmp))
	src, err := bbolt.Open(tmp, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	dst, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true, Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, src.View(func(stx *bbolt.Tx) error {
		return stx.ForEach(func(name []byte, sb *bbolt.Bucket) error {
			return dst.Update(func(dtx *bbolt.Tx) error {
				db, err := dtx.CreateBucket(name)
				if err != nil {
					return err
				}
				if err := db.SetSequence(sb.Sequence()); err != nil {
					return err
				}
				return sb.ForEach(func(k, v []byte) error { return db.Put(k, v) })
			})
		})
	}))
	require.NoError(t, dst.Close())
	require.NoError(t, src.Close())
	require.NoError(t, os.Remove(tmp))
}

// reads lists every read a command makes of a store, each a function that
// returns what it read (to compare with the sound store's) or its error.
func reads(ids []string, queues []string) map[string]func(store.Reader) (any, error) {
	list := func(f store.MessageFilter) func(store.Reader) (any, error) {
		return func(r store.Reader) (any, error) {
			var out []*domain.Message
			err := r.Messages(f, func(m *domain.Message) error {
				out = append(out, m)
				return nil
			})
			return out, err
		}
	}
	out := map[string]func(store.Reader) (any, error){
		"message list":         list(store.MessageFilter{}),
		"message list reverse": list(store.MessageFilter{Reverse: true}),
		"message list --key":   list(store.MessageFilter{Key: "order-6"}),
		"queue list": func(r store.Reader) (any, error) {
			var out []*store.QueueRecord
			err := r.Queues("", func(q *store.QueueRecord) error {
				out = append(out, q)
				return nil
			})
			return out, err
		},
		"audit list": func(r store.Reader) (any, error) {
			var out []*domain.AuditEntry
			err := r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
				out = append(out, e)
				return nil
			})
			return out, err
		},
		"tune list": func(r store.Reader) (any, error) {
			var out []domain.Param
			err := r.Params(func(p domain.Param) error {
				out = append(out, p)
				return nil
			})
			return out, err
		},
		"message by key": func(r store.Reader) (any, error) { return r.MessageByKey(storetest.SenderERP, "order-6") },
	}
	for _, s := range domain.Statuses {
		out["message list --status "+string(s)] = list(store.MessageFilter{Statuses: []domain.Status{s}})
	}
	for _, q := range queues {
		for _, open := range []bool{false, true} {
			out[fmt.Sprintf("queue show %s open=%t", q, open)] = func(r store.Reader) (any, error) {
				var ms []*domain.Message
				err := r.QueueMessages(q, store.QueueMessagesParams{Open: open}, func(m *domain.Message) error {
					ms = append(ms, m)
					return nil
				})
				return ms, err
			}
		}
	}
	for _, id := range ids {
		out["message show "+id] = func(r store.Reader) (any, error) { return r.Message(id) }
		out["message history "+id] = func(r store.Reader) (any, error) { return r.History(id) }
		out["message payload "+id] = func(r store.Reader) (any, error) { return r.Payload(id) }
	}
	return out
}

// readTruth reads a sound store through: the ids of its messages, the
// names of its queues and what each read returns.
func readTruth(t *testing.T, path string) ([]string, []string, map[string]any) {
	t.Helper()
	s, err := Open(path, Options{ReadOnly: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var ids, queues []string
	require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
		if err := r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
			ids = append(ids, m.ID)
			return nil
		}); err != nil {
			return err
		}
		return r.Queues("", func(q *store.QueueRecord) error {
			queues = append(queues, q.Name)
			return nil
		})
	}))
	truth := map[string]any{}
	for name, read := range reads(ids, queues) {
		require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
			v, err := read(r)
			truth[name] = v
			return err
		}), name)
	}
	return ids, queues, truth
}

// requireDamaged checks that err is how a damaged store is reported: the
// store's damaged error (exit 6), not a message not found (exit 3).
func requireDamaged(t *testing.T, path string, err error, what string) {
	t.Helper()
	require.True(t, errors.Is(err, ErrDamaged) || errors.Is(err, ErrNotStore), "%s: %v", what, err)
	if errors.Is(err, ErrDamaged) {
		require.ErrorIs(t, err, domain.ErrUnavailable, what)
		require.ErrorContains(t, err, "the store "+path+" is damaged: ", what)
		require.NotErrorIs(t, err, domain.ErrNotFound, what)
	}
}

// TestSoundStoreIsTheSameEveryRun keeps TestDamagedStore deterministic:
// the store it damages is the same bytes in every run.
func TestSoundStoreIsTheSameEveryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	soundStore(t, a)
	soundStore(t, b)
	da, err := os.ReadFile(a)
	require.NoError(t, err)
	db, err := os.ReadFile(b)
	require.NoError(t, err)
	require.True(t, bytes.Equal(da, db), "two runs of soundStore wrote different files")
}

// TestDamagedStore damages a store at random and reads it through, every
// read a command makes: each read returns what the sound store returns, or
// the store's damaged error (exit 6) — never other data, never "not found"
// (exit 3), never a panic or a memory fault, which would end the test
// binary. The store and the damage of each seed are the same in every run.
func TestDamagedStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sound := filepath.Join(dir, "sound.db")
	soundStore(t, sound)
	data, err := os.ReadFile(sound)
	require.NoError(t, err)
	ids, queues, truth := readTruth(t, sound)
	used := usedPages(t, sound)

	// readDamaged opens a damaged copy and runs every read, each in a
	// transaction of its own; it returns how many reads found the damage.
	readDamaged := func(t *testing.T, path string) int {
		s, err := Open(path, Options{NoSync: true, Clock: soundClock})
		if err != nil {
			requireDamaged(t, path, err, "open")
			return 1
		}
		defer func() { require.NoError(t, s.Close()) }()
		found := 0
		all := reads(ids, queues)
		for _, name := range slices.Sorted(maps.Keys(all)) {
			read := all[name]
			var got any
			err := s.View(t.Context(), func(r store.Reader) error {
				var err error
				got, err = read(r)
				return err
			})
			if err != nil {
				requireDamaged(t, path, err, name)
				found++
				continue
			}
			require.Equal(t, truth[name], got, "%s: a damaged store returned other data than the sound one", name)
		}
		// A write either commits or is refused as damage.
		err = s.Update(t.Context(), func(w store.Writer) error {
			m := storetest.NewMessage()
			return w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received"))
		})
		if err != nil {
			requireDamaged(t, path, err, "insert")
		}
		return found
	}

	t.Run("FlippedBits", func(t *testing.T) {
		// 50 seeds of 1 to 4 flipped bits in the pages reads walk.
		hit := 0
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "damaged.db")
				require.NoError(t, os.WriteFile(path, data, 0o600))
				flipBits(t, path, used, seed, 1+int(seed%4))
				if readDamaged(t, path) > 0 {
					hit++
				}
			})
		}
		t.Logf("%d of 50 stores with flipped bits were found damaged by a read", hit)
	})
	t.Run("OverwrittenBytes", func(t *testing.T) {
		// 24 seeds of 40 bytes overwritten anywhere in the data pages.
		hit := 0
		for seed := range uint64(24) {
			t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "damaged.db")
				require.NoError(t, os.WriteFile(path, data, 0o600))
				damageDataPages(t, path, seed, 40)
				if readDamaged(t, path) > 0 {
					hit++
				}
			})
		}
		// Most seeds hit something: the test damages what reads use.
		t.Logf("%d of 24 damaged stores were found damaged", hit)
		require.GreaterOrEqual(t, hit, 20)
	})
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
