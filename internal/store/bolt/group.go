package bolt

import (
	"errors"
	"fmt"
	"sync"

	bbolt "go.etcd.io/bbolt"
)

// maxGroup bounds how many Updates share one commit.
const maxGroup = 1000

// groupCommit runs concurrent Updates in shared commits without a fixed
// wait: an Update that finds no commit under way commits at once; Updates
// that arrive while a commit runs are committed together in the next one.
// A lone writer pays no delay, and under load each fsync serves many.
type groupCommit struct {
	db      *bbolt.DB
	mu      sync.Mutex
	waiting []*groupCall
	leading bool // some caller is committing the queue

	// Tests only: queued runs after each call joins the queue, hold in the
	// leader before it takes a group, so a test can line callers up.
	queued func()
	hold   func()
}

type groupCall struct {
	fn   func(*bbolt.Tx) error
	done chan error
}

// errGroupRetry rolls back a shared commit when one of its functions failed.
var errGroupRetry = errors.New("a function of the group failed")

// run commits fn, alone or with others, and returns its outcome. The first
// caller to find the queue idle becomes its leader and commits groups until
// the queue is empty; the others wait for their result.
func (g *groupCommit) run(fn func(*bbolt.Tx) error) error {
	call := &groupCall{fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.waiting = append(g.waiting, call)
	if g.queued != nil {
		g.queued()
	}
	if g.leading {
		g.mu.Unlock()
		return <-call.done
	}
	g.leading = true
	g.mu.Unlock()
	for {
		if g.hold != nil {
			g.hold()
		}
		g.mu.Lock()
		group := g.waiting[:min(len(g.waiting), maxGroup)]
		g.waiting = g.waiting[len(group):]
		if len(group) == 0 {
			g.leading = false
			g.waiting = nil
			g.mu.Unlock()
			return <-call.done
		}
		g.mu.Unlock()
		g.commit(group)
	}
}

// commit runs a group in one transaction. When a function fails, the
// transaction is rolled back, that function gets its error, and the others
// run again without it — so a function may run more than once.
func (g *groupCommit) commit(group []*groupCall) {
	for len(group) > 0 {
		failed, ferr := -1, error(nil)
		// Damage that the commit itself runs into (writing the freelist,
		// splitting a node) is an error for the whole group, not a panic
		// that would end the process.
		err := update(g.db, g.db.Path(), func(tx *bbolt.Tx) error {
			for i, c := range group {
				if err := safeCall(g.db.Path(), c.fn, tx); err != nil {
					failed, ferr = i, err
					return errGroupRetry
				}
			}
			return nil
		})
		if failed >= 0 {
			group[failed].done <- ferr
			group = append(group[:failed:failed], group[failed+1:]...)
			continue
		}
		for _, c := range group {
			c.done <- err
		}
		return
	}
}

// safeCall turns a panic in fn into an error, so one bad function cannot
// take the other callers of its group down with it; a panic that damage to
// the store raised is the store's damaged error.
func safeCall(path string, fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if isDamage(r) {
				err = recovered(path, r)
				return
			}
			err = fmt.Errorf("panic in a store update: %v", r)
		}
	}()
	return fn(tx)
}
