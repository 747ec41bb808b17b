package bolt

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// ErrDamaged marks a store whose pages or records are damaged: bbolt found
// a page it cannot read, or a record or an index entry does not decode.
// Such an error is also of kind domain.ErrUnavailable (exit 6).
var ErrDamaged = store.ErrDamaged

// errRecord marks a record or an index entry that cannot be what the store
// wrote: the transaction that read it reports the store as damaged.
var errRecord = errors.New("damaged record")

// recordError is a record that does not decode, or an index entry that
// names nothing.
type recordError struct{ msg string }

func (e *recordError) Error() string { return e.msg }

func (e *recordError) Is(target error) bool { return target == errRecord }

// corrupt returns the error of a record or an index entry that cannot be
// what the store wrote. It wraps no error of its own: a missing message an
// index names is damage, not a message not found (exit 3).
func corrupt(format string, args ...any) error {
	return &recordError{msg: fmt.Sprintf(format, args...)}
}

// damagedError is a store found damaged, with what to do about it.
type damagedError struct{ path, reason string }

func (e *damagedError) Error() string {
	return fmt.Sprintf("the store %s is damaged: %s", e.path, e.reason)
}

// Hint tells the user what to do about a damaged store.
func (e *damagedError) Hint() string {
	return "'bbolt check " + e.path + "' shows the damage; restore the file from a backup, or move it aside to start a new store"
}

func (e *damagedError) Unwrap() []error { return []error{domain.ErrUnavailable, ErrDamaged} }

// damaged turns the error of a transaction that read a damaged record into
// the store's damaged error; other errors pass unchanged.
func damaged(path string, err error) error {
	var rec *recordError
	if errors.As(err, &rec) {
		return &damagedError{path: path, reason: rec.msg}
	}
	return err
}

// recovered is the error of a panic that reading the store raised (see
// isDamage); any other panic is a bug, not damage, and goes on. It is
// called by the deferred function that recovered r.
func recovered(path string, r any) error {
	if !isDamage(r) {
		panic(r)
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok && f.Addr() >= minFaultAddr {
		return &damagedError{path: path, reason: fmt.Sprintf("a page refers to memory outside the file (fault at %#x)", f.Addr())}
	}
	return &damagedError{path: path, reason: fmt.Sprintf("reading it failed: %v", r)}
}

// minFaultAddr separates a read past the file's mapping from a nil pointer.
const minFaultAddr = 1 << 16

// isDamage reports whether the panic being recovered is how damage to the
// file shows: a memory fault far from address zero — a read past the
// file's mapping, wherever it happened (a value bbolt handed out can reach
// past it) — or a panic raised inside bbolt (an index out of range, a
// failed page assertion, a nil page it followed), which is how bbolt
// reports damage it finds while it reads. It must be called by the
// deferred function that recovered r.
func isDamage(r any) bool {
	if f, ok := r.(interface{ Addr() uintptr }); ok && f.Addr() >= minFaultAddr {
		return true
	}
	return panickedInBolt()
}

// panickedInBolt reports whether the panic being recovered was raised in
// bbolt's code: the first frame below the runtime's panic functions is
// bbolt's.
func panickedInBolt() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}

// verifyLimit is the largest store that Open reads through before it uses
// it: reading a few megabytes costs milliseconds, and finds damage before a
// command acts rather than halfway through. A larger store is checked as
// it is read.
const verifyLimit = 16 << 20

// verify reads every bucket of a store through, every key and value byte,
// as bbolt's tx.Check walks its pages — but in this goroutine, where a
// fault on a damaged page is recovered (tx.Check reads in a goroutine of
// its own, where it would end the process).
func verify(db *bbolt.DB, path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = recovered(path, r)
		}
	}()
	return db.View(func(tx *bbolt.Tx) error {
		var sum byte
		touch := func(k, v []byte) error {
			for _, b := range k {
				sum ^= b
			}
			for _, b := range v {
				sum ^= b
			}
			return nil
		}
		err := tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return b.ForEach(touch) })
		runtime.KeepAlive(sum)
		return err
	})
}

// update runs fn in a read-write transaction of db, which bbolt rolls back
// when damage it runs into raises a panic: the error is then the store's
// damaged error.
func update(db *bbolt.DB, path string, fn func(*bbolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = recovered(path, r)
		}
	}()
	return db.Update(fn)
}
