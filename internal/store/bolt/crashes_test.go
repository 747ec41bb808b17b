package bolt

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/store"
)

// The record of a counted crash is sealed: a flipped bit in it is damage,
// named, never a crash taken back from the wrong message or count.
func TestCountedCrashesAreSealed(t *testing.T) {
	t.Parallel()
	const id = "0190a4b2-7c1d-7e3f-8a5b-1c2d3e4f5a6b"
	dead := store.Node{ID: "N1", Incarnation: 7}
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	keep := func(s *Store) {
		require.NoError(t, s.write(t.Context(), func(t *txn) error {
			return t.keepCrashes(dead, []store.CountedCrash{{ID: id, Crash: 2, At: at}})
		}))
	}
	// Sound, the record reads back as written, once.
	keep(s)
	var got []store.CountedCrash
	require.NoError(t, s.write(t.Context(), func(t *txn) (err error) {
		got, err = t.takeCrashes(dead.Incarnation)
		return err
	}))
	require.Equal(t, []store.CountedCrash{{ID: id, Crash: 2, At: at}}, got)
	require.NoError(t, s.write(t.Context(), func(t *txn) (err error) {
		got, err = t.takeCrashes(dead.Incarnation)
		return err
	}))
	require.Empty(t, got, "a crash is taken once")
	keep(s)
	require.NoError(t, s.Close())

	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte(bucketCrashes))
		k, v := b.Cursor().First()
		require.NotNil(t, k)
		v = append([]byte{}, v...)
		v[0] ^= 0x01 // crash 2 → crash 3: still a valid varint
		return b.Put(append([]byte{}, k...), v)
	})
	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	err = s.write(t.Context(), func(t *txn) error {
		_, err := t.takeCrashes(dead.Incarnation)
		return err
	})
	requireDamaged(t, path, err, "a flipped bit in a counted crash")
	require.ErrorContains(t, err, "the record of a crash counted against incarnation 7 fails its check")
}
