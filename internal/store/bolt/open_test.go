package bolt

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

func TestOpen(t *testing.T) {
	t.Parallel()

	t.Run("CreatesNoDirectoryUnlessAsked", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "typo", "deep")
		_, err := Open(filepath.Join(dir, "queuectl.db"), Options{NoSync: true})
		require.ErrorIs(t, err, ErrNoDir)
		require.ErrorIs(t, err, domain.ErrUnavailable)
		_, err = os.Stat(filepath.Dir(dir))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing was created")
	})

	t.Run("CreatesTheParentDirectory", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data", "queuectl")
		path := filepath.Join(dir, "queuectl.db")
		s, err := Open(path, Options{NoSync: true, MakeDirs: true})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		info, err := os.Stat(dir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), info.Mode().Perm())
		info, err = os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm()&0o600)
		checkFile(t, path)
	})

	t.Run("InitialisesAnEmptyFile", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "queuectl.db")
		require.NoError(t, os.WriteFile(path, nil, 0o600))
		s, err := Open(path, Options{NoSync: true})
		require.NoError(t, err)
		insert(t, s, 3, 3)
		require.NoError(t, s.Close())
		checkFile(t, path)
	})

	t.Run("LockedByAnotherOpenIsUnavailable", func(t *testing.T) {
		t.Parallel()
		s := openTestStore(t)
		for _, readOnly := range []bool{false, true} {
			start := time.Now()
			_, err := Open(s.Path(), Options{Timeout: 100 * time.Millisecond, ReadOnly: readOnly})
			require.ErrorIs(t, err, domain.ErrUnavailable)
			require.EqualError(t, err, "the store "+s.Path()+" is in use by another process")
			require.Equal(t, "stop the other queuectl process, or use its server with --server", domain.HintOf(err))
			require.Less(t, time.Since(start), 10*time.Second, "Open gives up after its timeout")
		}
		insert(t, s, 1, 1) // the first Open is unharmed
	})

	t.Run("ReadOnly", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "queuectl.db")
		_, err := Open(path, Options{ReadOnly: true})
		require.ErrorIs(t, err, domain.ErrNotFound)
		_, err = os.Stat(path)
		require.ErrorIs(t, err, os.ErrNotExist, "a read-only open creates nothing")

		s, err := Open(path, Options{NoSync: true})
		require.NoError(t, err)
		ids := insert(t, s, 2, 2)
		require.NoError(t, s.Close())

		ro, err := Open(path, Options{ReadOnly: true})
		require.NoError(t, err)
		defer func() { require.NoError(t, ro.Close()) }()
		require.NoError(t, ro.View(t.Context(), func(r store.Reader) error {
			_, err := r.Message(ids[1])
			return err
		}))
		err = ro.Update(t.Context(), func(store.Writer) error { return nil })
		require.ErrorContains(t, err, "read-only")
		second, err := Open(path, Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
		require.NoError(t, err, "readers share the file")
		require.NoError(t, second.Close())
		checkFile(t, path)
	})

	t.Run("OpeningAStoreWritesNothing", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "queuectl.db")
		s, err := Open(path, Options{NoSync: true})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		txid := rawTxID(t, path)
		s, err = Open(path, Options{NoSync: true})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		require.Equal(t, txid, rawTxID(t, path))
	})

	for name, tt := range map[string]struct {
		version uint32
		want    string
		hint    string
	}{
		"RefusesAnOlderLayout": {1, "has layout version 1, written by an older queuectl; this queuectl reads versions 2 and 3",
			"finish its messages with the queuectl that wrote it"},
		"RefusesANewerLayout": {4, "has layout version 4, written by a newer queuectl; this queuectl reads versions 2 and 3",
			"use the queuectl that wrote it, or a newer one"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queuectl.db")
			s, err := Open(path, Options{NoSync: true})
			require.NoError(t, err)
			require.NoError(t, s.Close())
			rawUpdate(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte(bucketMeta)).Put([]byte(keyVersion), binary.BigEndian.AppendUint32(nil, tt.version))
			})
			for _, readOnly := range []bool{false, true} {
				_, err = Open(path, Options{ReadOnly: readOnly})
				require.ErrorIs(t, err, domain.ErrUnavailable, "never misread")
				require.EqualError(t, err, "the store "+path+" "+tt.want)
				require.Contains(t, domain.HintOf(err), tt.hint)
			}
		})
	}
}

func TestOpenRefusesWhatIsNotAStore(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(t *testing.T, path string){
		"random bytes": func(t *testing.T, path string) {
			rng := rand.New(rand.NewPCG(1, 2))
			data := make([]byte, 64<<10)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			require.NoError(t, os.WriteFile(path, data, 0o600))
		},
		"a text file": func(t *testing.T, path string) {
			text := strings.Repeat("engine:\n  role: central\n  workers: 16\n", 1000)
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		},
		"a short text file": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("queuectl\n"), 0o600))
		},
		"a directory": func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path, 0o700))
		},
		"a store truncated to half": func(t *testing.T, path string) {
			size := realStore(t, path)
			require.NoError(t, os.Truncate(path, size/2))
		},
		"a store truncated just after its meta pages": func(t *testing.T, path string) {
			realStore(t, path)
			require.NoError(t, os.Truncate(path, int64(2*os.Getpagesize())+100))
		},
		"a store truncated to its first page": func(t *testing.T, path string) {
			realStore(t, path)
			require.NoError(t, os.Truncate(path, int64(os.Getpagesize())))
		},
		"a store with damaged meta pages": func(t *testing.T, path string) {
			realStore(t, path)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			junk := []byte(strings.Repeat("x", 64))
			_, err = f.WriteAt(junk, 16)
			require.NoError(t, err)
			_, err = f.WriteAt(junk, int64(os.Getpagesize())+16)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		},
		"another program's bbolt file": func(t *testing.T, path string) {
			rawUpdate(t, path, func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("widgets"))
				if err != nil {
					return err
				}
				return b.Put([]byte("w1"), []byte("blue"))
			})
		},
		"a bbolt file with a foreign meta bucket": func(t *testing.T, path string) {
			rawUpdate(t, path, func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte(bucketMeta))
				if err != nil {
					return err
				}
				return b.Put([]byte(keyFormat), []byte("vault"))
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queuectl.db")
			build(t, path)
			for _, readOnly := range []bool{false, true} {
				s, err := Open(path, Options{ReadOnly: readOnly, Timeout: time.Second})
				if err == nil {
					require.NoError(t, s.Close())
				}
				require.ErrorIs(t, err, ErrNotStore, "read-only %t", readOnly)
				require.True(t, strings.HasPrefix(err.Error(), path+" is not a queuectl store: "), "error %q", err)
			}
		})
	}
}

// realStore makes a store of a few hundred messages at path and returns
// its size.
func realStore(t *testing.T, path string) int64 {
	t.Helper()
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	insert(t, s, 300, 100)
	require.NoError(t, s.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, info.Size(), int64(8*os.Getpagesize()))
	return info.Size()
}

// rawUpdate changes a file with bbolt directly, past the store.
func rawUpdate(t *testing.T, path string, fn func(*bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
}

// rawTxID reads the id of the file's last committed transaction.
func rawTxID(t *testing.T, path string) int {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	tx, err := db.Begin(false)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback()) }()
	return tx.ID()
}
