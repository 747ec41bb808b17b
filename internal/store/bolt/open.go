package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"time"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/queuectl/queuectl/internal/domain"
)

// ErrLocked marks a store that another process holds: bbolt's lock on the
// file did not come free within the open's timeout. Such an error is also
// of kind domain.ErrUnavailable.
var ErrLocked = errors.New("the store is locked by another process")

// lockedError is a store found locked, with what to do about it.
type lockedError struct{ path string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("the store %s is in use by another process", e.path)
}

// Hint tells the user what to do about a locked store.
func (e *lockedError) Hint() string { return inUseHint }

func (e *lockedError) Unwrap() []error { return []error{domain.ErrUnavailable, ErrLocked} }

// ErrNotStore marks a file that exists but is not a queuectl store: another
// program's bbolt file, a damaged or truncated store, or no bbolt file at all.
var ErrNotStore = errors.New("not a queuectl store")

// The meta bucket marks a file as a queuectl store.
const (
	formatMarker = "queuectl"
	// layoutVersion 3 seals every value (seal.go); a store of version 2,
	// whose values are unsealed, is read as it is and becomes version 3
	// with keyUnsealed at its first read-write open.
	layoutVersion = 3
	// unsealedVersion is the layout version before sealing.
	unsealedVersion = 2
	keyFormat       = "format"
	keyVersion      = "version"
	// keyEpoch holds the lease epoch (EngineStore.Join).
	keyEpoch = "epoch"
	// keyUnsealed, present, says the store was written at layout version
	// 2: it may hold unsealed values, accepted until rewritten.
	keyUnsealed = "unsealed"
)

// inUseHint tells the user what to do about a locked store.
const inUseHint = "stop the other queuectl process, or use its server with --server"

// notStoreError explains why a file is not a usable queuectl store.
type notStoreError struct {
	path   string
	reason string
}

func (e *notStoreError) Error() string {
	return fmt.Sprintf("%s is not a queuectl store: %s", e.path, e.reason)
}

func (e *notStoreError) Unwrap() error { return ErrNotStore }

func notStore(path, format string, args ...any) error {
	return &notStoreError{path: path, reason: fmt.Sprintf(format, args...)}
}

// openFile opens the bbolt file, makes sure it is a queuectl store and
// creates the buckets of a new one.
//
// bbolt trusts the file it maps: damage it does not detect surfaces as a
// panic or a memory fault, and a read-write open already reads the
// freelist, wherever the meta page says it is. So an existing file is first
// opened read-only, which reads only the meta pages, and inspected; only a
// sound store is then opened for writing. st says what the store may hold
// of an older layout.
func openFile(path string, opts Options) (db *bbolt.DB, st inspected, err error) {
	if !opts.ReadOnly && opts.MakeDirs {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, st, fmt.Errorf("create the directory of store %s: %w", path, err)
		}
	}
	if !opts.ReadOnly {
		if _, err := os.Stat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
			return nil, st, &noDirError{dir: filepath.Dir(path), path: path}
		}
	}
	size, err := checkSize(path, opts.ReadOnly)
	if err != nil {
		return nil, st, err
	}
	if size > 0 {
		db, err := openBolt(path, opts.Timeout, true, opts.NoSync)
		if err != nil {
			return nil, st, err
		}
		st, err := inspect(db, path)
		if err == nil && size <= verifyLimit {
			err = verify(db, path)
		}
		if err == nil && opts.ReadOnly {
			if st.complete {
				return db, st, nil
			}
			err = notStore(path, "it has not been initialised; open it once without read-only")
		}
		if closeErr := db.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return nil, st, err
		}
	}
	db, err = openBolt(path, opts.Timeout, false, opts.NoSync)
	if err != nil {
		return nil, st, err
	}
	if st, err = initialise(db, path); err != nil {
		_ = db.Close()
		return nil, st, err
	}
	return db, st, nil
}

// openBolt opens the file with bbolt and translates its failures into
// errors a user can act on.
func openBolt(path string, timeout time.Duration, readOnly, noSync bool) (db *bbolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, recovered(path, r)
		}
	}()
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      timeout,
		ReadOnly:     readOnly,
		NoSync:       noSync,
		FreelistType: bbolt.FreelistMapType,
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &lockedError{path: path}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, notStore(path, "it is not a bbolt database or its header is damaged (%v)", err)
	case errors.Is(err, berrors.ErrVersionMismatch):
		return nil, notStore(path, "it was written by an incompatible bbolt version")
	}
	return nil, fmt.Errorf("open store %s: %w", path, err)
}

// checkSize returns the size of the file, 0 when it does not exist yet. It
// refuses files too short to hold bbolt's two meta pages: bbolt would map
// them and fault on the missing page instead of returning an error. An empty
// file is fine: bbolt initialises it.
func checkSize(path string, readOnly bool) (int64, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && readOnly:
		return 0, domain.NotFoundf("the store %s does not exist", path)
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("open store %s: %w", path, err)
	case info.IsDir():
		return 0, notStore(path, "it is a directory")
	case info.Size() == 0 && readOnly:
		return 0, notStore(path, "it is empty")
	case info.Size() > 0 && info.Size() < 2*int64(os.Getpagesize()):
		return 0, notStore(path, "it is only %d bytes long", info.Size())
	}
	return info.Size(), nil
}

// inspected is what inspect found.
type inspected struct {
	// complete: the store has every bucket.
	complete bool
	// version is the layout version, 0 for an empty bbolt file.
	version uint32
	// legacy: the store may hold unsealed values.
	legacy bool
}

// oldOrder says the status index is in the order of layout version 2.
func (st inspected) oldOrder() bool { return st.version == unsealedVersion }

// inspect checks that db is a queuectl store of a layout this build reads,
// or an empty bbolt file, and reports whether it has every bucket and
// whether it may hold unsealed values.
func inspect(db *bbolt.DB, path string) (st inspected, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			st, err = inspected{}, recovered(path, r)
		}
	}()
	info, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("open store %s: %w", path, err)
	}
	err = db.View(func(tx *bbolt.Tx) error {
		// A truncated file still has valid meta pages, but pages past its
		// end would fault when read; bbolt does not look.
		if tx.Size() > info.Size() {
			return notStore(path, "it is truncated (%d bytes, the store needs %d)", info.Size(), tx.Size())
		}
		meta := tx.Bucket([]byte(bucketMeta))
		if meta == nil {
			if k, _ := tx.Cursor().First(); k != nil {
				return notStore(path, "it is a bbolt database of another program")
			}
			return nil
		}
		if st.version, err = checkMeta(path, meta); err != nil {
			return err
		}
		st.legacy = st.version == unsealedVersion || meta.Get([]byte(keyUnsealed)) != nil
		// A bucket no layout had is a damaged name: creating the
		// "missing" one beside it would write to a damaged store.
		known := bucketNames()
		if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			if !slices.Contains(known, string(name)) {
				return &damagedError{path: path, reason: fmt.Sprintf("it holds a bucket %q that no queuectl store has", name)}
			}
			return nil
		}); err != nil {
			return err
		}
		st.complete = true
		for _, name := range bucketNames() {
			st.complete = st.complete && tx.Bucket([]byte(name)) != nil
		}
		return nil
	})
	return st, err
}

// initialise creates what a read-write store lacks: everything for a new
// file, the buckets a newer layout added for an older one, the layout
// version that seals values for a store of version 2 (which keeps its
// unsealed values: keyUnsealed). It writes only when something is missing,
// so opening a store costs no commit. legacy says the store may hold
// unsealed values. A store of version 2 also gets its status index in the
// order of version 3 (statusKey).
func initialise(db *bbolt.DB, path string) (st inspected, err error) {
	if st, err = inspect(db, path); err != nil || (st.complete && st.version == layoutVersion) {
		return st, err
	}
	err = update(db, path, func(tx *bbolt.Tx) error {
		noChecks := tx.Bucket([]byte(bucketChecks)) == nil
		noCodes := tx.Bucket([]byte(bucketCodes)) == nil
		for _, name := range bucketNames() {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return fmt.Errorf("initialise store %s: bucket %s: %w", path, name, err)
			}
		}
		meta := tx.Bucket([]byte(bucketMeta))
		if meta.Get([]byte(keyFormat)) != nil {
			if st.version == unsealedVersion {
				if err := reorderStatusIndex(tx); err != nil {
					return fmt.Errorf("initialise store %s: %w", path, err)
				}
			}
			if noChecks {
				// A store from before the check-back (§9): its PEND
				// messages wait for their first check.
				if err := indexPrepared(tx); err != nil {
					return fmt.Errorf("initialise store %s: %w", path, err)
				}
			}
			if noCodes {
				// A store from before receiver codes (§3): its queues
				// keep their names.
				if err := adoptCodes(tx, st.legacy); err != nil {
					return fmt.Errorf("initialise store %s: %w", path, err)
				}
			}
			if st.version == unsealedVersion {
				if err := meta.Put([]byte(keyUnsealed), []byte{1}); err != nil {
					return err
				}
				return meta.Put([]byte(keyVersion), binary.BigEndian.AppendUint32(nil, layoutVersion))
			}
			return nil
		}
		if err := meta.Put([]byte(keyFormat), []byte(formatMarker)); err != nil {
			return err
		}
		return meta.Put([]byte(keyVersion), binary.BigEndian.AppendUint32(nil, layoutVersion))
	})
	if err == nil {
		st.version, st.complete = layoutVersion, true
	}
	return st, err
}

// reorderStatusIndex rewrites the status index of a store of layout
// version 2 in the order of version 3 (statusKey): once, as the store is
// upgraded, in the upgrade's transaction.
func reorderStatusIndex(tx *bbolt.Tx) error {
	old := tx.Bucket([]byte(bucketStatus))
	var keys [][]byte
	if err := old.ForEach(func(k, _ []byte) error {
		s, ok := indexStatus(k[0], true)
		if len(k) != 17 || !ok {
			return corrupt("the status index holds a key %x of no status", k)
		}
		keys = append(keys, statusKey(s, uuid.UUID(k[1:])))
		return nil
	}); err != nil {
		return err
	}
	if err := tx.DeleteBucket([]byte(bucketStatus)); err != nil {
		return err
	}
	b, err := tx.CreateBucket([]byte(bucketStatus))
	if err != nil {
		return err
	}
	b.FillPercent = 0.9
	slices.SortFunc(keys, bytes.Compare)
	for _, k := range keys {
		if err := b.Put(k, []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// noDirError refuses a new store in a directory that does not exist: it
// is ErrNoDir, and unavailable.
type noDirError struct{ dir, path string }

func (e *noDirError) Error() string {
	return fmt.Sprintf("the directory %s of the store %s does not exist", e.dir, e.path)
}

func (e *noDirError) Unwrap() []error { return []error{ErrNoDir, domain.ErrUnavailable} }

// checkMeta accepts the meta bucket of a queuectl store this build can read
// and returns its layout version.
func checkMeta(path string, meta *bbolt.Bucket) (uint32, error) {
	if string(meta.Get([]byte(keyFormat))) != formatMarker {
		return 0, notStore(path, "its meta bucket has no queuectl format marker")
	}
	v := meta.Get([]byte(keyVersion))
	if len(v) != 4 {
		return 0, notStore(path, "its layout version is unreadable")
	}
	switch n := binary.BigEndian.Uint32(v); {
	case n < unsealedVersion:
		return n, domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("the store %s has layout version %d, written by an older queuectl; this queuectl reads versions %d and %d", path, n, unsealedVersion, layoutVersion),
			"finish its messages with the queuectl that wrote it (serve until the queues are empty, then purge), then move the file aside: this queuectl starts a new store there")
	case n > layoutVersion:
		return n, domain.WithHint(domain.ErrUnavailable,
			fmt.Sprintf("the store %s has layout version %d, written by a newer queuectl; this queuectl reads versions %d and %d", path, n, unsealedVersion, layoutVersion),
			"use the queuectl that wrote it, or a newer one")
	default:
		return n, nil
	}
}
