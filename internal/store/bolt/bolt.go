// Package bolt is the embedded store of queuectl: one bbolt file that one
// process opens for writing at a time. It implements store.Store.
//
// Layout (all keys sort so that cursors walk them in the order lists need;
// ids are the 16 bytes of the UUID; records are in the binary form of
// codec.go; every value is sealed with the CRC-32C of its key and bytes,
// which every read checks, seal.go):
//
//	meta          format marker, layout version, lease epoch, EOIO switch
//	messages      id -> message record
//	payloads      id -> payload bytes, stored once: under the inbound
//	              message's id, shared by the outbound messages routed from it
//	payload_refs  id -> how many messages share the payload, while above one
//	payload_versions id be32(n) -> version n of an edited message's
//	              payload, for each version before its current one
//	history       id -> the message's history entries, oldest first
//	queue_all     queue 0x00 be64(seq) -> id, every message that has a seq
//	queue_open    queue 0x00 be64(seq) -> id, messages not PEND, DLVD or FAIL
//	app_open      queue 0x00 app_queue 0x00 be64(seq) -> id, the open messages
//	              of the queues app queues share (§10), by app queue
//	ready         stage(I|O) queue 0x00 be64(seq) -> id, TBDL messages: what
//	              claims read, the inbound queues' first
//	due           be64(next attempt, µs) id -> (empty), WAIT messages
//	checks        kind(P|C) be64(µs) id -> (empty), PEND messages that wait
//	              for a check-back, by when they were prepared (P) or
//	              last checked (C)
//	status        status(1) id -> (empty), the status index
//	queues        name -> queue record with its per-status counts
//	params        name 0x00 sub -> be64(value)
//	audit         be64(seq) -> audit entry (JSON)
//	receiver_codes receiver -> the code of its outbound queues (§3)
//	code_owners   code -> the receiver it was given to
//	crashes       be64(incarnation) id -> uvarint(crash) varint(µs), the
//	              crashes a recovery counted against a dead incarnation,
//	              kept until its process joins again or another one does
package bolt

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// DefaultTimeout is how long Open waits for a lock held by another process
// before it reports the store as in use.
const DefaultTimeout = time.Second

// Options configure Open.
type Options struct {
	// Timeout bounds the wait for a lock held by another process; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// ReadOnly opens the store under a shared lock, for reading only. The
	// file must exist and be a queuectl store.
	ReadOnly bool
	// NoSync skips the fsync of each commit, so a crash can lose or corrupt
	// data. For tests only.
	NoSync bool
	// Clock is the store's clock; default time.Now. Tests move it by hand.
	Clock func() time.Time
	// MakeDirs creates the missing directories of a new store's path.
	// Without it a path whose directory does not exist is refused
	// (ErrNoDir): a mistyped path makes no new directories.
	MakeDirs bool
}

// ErrNoDir is the refusal of a new store whose directory does not exist.
var ErrNoDir = errors.New("the store's directory does not exist")

// Store is a queuectl store in one bbolt file. It is safe for concurrent use.
type Store struct {
	path     string
	db       *bbolt.DB
	group    *groupCommit
	readOnly bool
	// baseTxID is the bbolt transaction id when the store was opened;
	// Commits counts from it.
	baseTxID int
	// legacy: the store may hold unsealed values (seal.go).
	legacy bool
	// oldOrder: the status index is in the order of layout version 2 (a
	// store of version 2 opened read-only).
	oldOrder bool

	// mu is held shared by every View and Update and exclusively by Close,
	// so that Close waits for the transactions under way.
	mu      sync.RWMutex
	closed  bool
	commits uint64 // Commits at Close

	clock func() time.Time
	// wake carries EngineStore.Wakeups: a value after an Update committed.
	wake chan struct{}
	// claims is where the next claim starts (queues take turns).
	claims store.ClaimCursor
	// serving is the engine incarnation of this process that joined and
	// has not left: the one node of an embedded store (node list), which
	// holds every queue's lease. Nil while no engine runs here.
	serving atomic.Pointer[store.NodeInfo]
}

var _ store.Store = (*Store)(nil)

// Open opens the store at path, creating the file and its parent directory
// (mode 0700) when they are missing, unless opts.ReadOnly is set. A store
// locked by another process is reported, after opts.Timeout, as an error
// wrapping domain.ErrUnavailable; a file that is not a queuectl store as an
// error wrapping ErrNotStore.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	db, st, err := openFile(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	s := &Store{path: path, db: db, readOnly: opts.ReadOnly, group: &groupCommit{db: db}, wake: make(chan struct{}, 1),
		clock: opts.Clock, legacy: st.legacy, oldOrder: st.oldOrder()}
	if err := db.View(func(tx *bbolt.Tx) error {
		s.baseTxID = tx.ID()
		return nil
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// View runs fn in a read-only bbolt transaction. Damage that the
// transaction runs into — a page bbolt cannot read, a record that does not
// decode — is an error wrapping ErrDamaged, not a panic.
func (s *Store) View(ctx context.Context, fn func(store.Reader) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.errClosed()
	}
	// bbolt reads the file through its memory mapping, and trusts it: a
	// damaged page can send a read past the mapping (a fault) or trip an
	// assertion. bbolt's View rolls the transaction back as the panic
	// passes, so the store stays usable for the error to be reported.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = recovered(s.path, r)
		}
	}()
	return damaged(s.path, s.db.View(func(tx *bbolt.Tx) error {
		t := &txn{tx: tx, clock: s.clock, owner: s.owner(), legacy: s.legacy, oldOrder: s.oldOrder}
		if err := fn(t); err != nil {
			return err
		}
		return t.flush()
	}))
}

// Update runs fn in a read-write transaction. Concurrent Updates are grouped
// into one commit (see groupCommit): when one of them fails, the commit is
// rolled back, the failing fn gets its error and the others are run again
// together. fn may therefore run more than once and must act only through
// the Writer.
func (s *Store) Update(ctx context.Context, fn func(store.Writer) error) error {
	err := s.write(ctx, func(t *txn) error { return fn(t) })
	if err == nil {
		s.notify() // a send, an action or a started queue may have made messages ready
	}
	return err
}

// write runs fn in a read-write transaction of the group commit, with a txn
// of its own whose changed queue records it writes back when fn is done. Like
// Update's, fn may run more than once.
func (s *Store) write(ctx context.Context, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.errClosed()
	}
	if s.readOnly {
		return fmt.Errorf("the store %s is open read-only", s.path)
	}
	err := damaged(s.path, s.group.run(func(tx *bbolt.Tx) error {
		t := &txn{tx: tx, clock: s.clock, owner: s.owner(), legacy: s.legacy, oldOrder: s.oldOrder}
		if err := fn(t); err != nil {
			return err
		}
		return t.flush()
	}))
	if errors.Is(err, syscall.ENOSPC) && !errors.Is(err, domain.ErrNoSpace) {
		// bbolt rolls the transaction back: nothing of it is in the file.
		return domain.NoSpace("the store "+s.path, err)
	}
	return err
}

// Commits returns how many write transactions were committed since Open,
// read from bbolt's transaction id, so grouped Updates count once.
func (s *Store) Commits() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.commits
	}
	return s.currentCommits()
}

func (s *Store) currentCommits() uint64 {
	var id int
	if err := s.db.View(func(tx *bbolt.Tx) error {
		id = tx.ID()
		return nil
	}); err != nil {
		return 0
	}
	return uint64(id - s.baseTxID)
}

// PageWrites returns how many writes of pages (meta pages included) the
// commits since Open made, and the bytes of the pages they changed, from
// bbolt's statistics: what one commit costs the disk, besides its syncs.
func (s *Store) PageWrites() (writes, bytes uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, 0
	}
	st := s.db.Stats().TxStats
	return uint64(st.GetWrite()), uint64(st.GetPageAlloc())
}

// Close waits for the transactions under way and closes the file. Closing a
// closed store does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.commits = s.currentCommits()
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) errClosed() error {
	return domain.Errorf(domain.ErrUnavailable, "the store %s is closed", s.path)
}

// now is the store's clock, to the microsecond.
func (s *Store) now() time.Time {
	return s.clock().UTC().Truncate(time.Microsecond)
}

// Size returns the bytes the store's pages take up: its high-water mark,
// free pages within it included, not the file's size, which bbolt grows
// ahead in large steps.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var size int64
	err := s.View(ctx, func(r store.Reader) error {
		size = r.(*txn).tx.Size()
		return nil
	})
	return size, err
}
