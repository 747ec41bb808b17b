package bolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openTestStore(t) })
}

func TestEngineStore(t *testing.T) {
	t.Parallel()
	storetest.RunEngine(t, func(t *testing.T) store.Store { return openTestStore(t) })
}

// openTestStore opens a new store without fsync in a temporary directory.
// At cleanup it closes the store and runs bbolt's consistency check on the
// file.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	return s
}

// checkFile runs bbolt's consistency check (page references, freelist,
// key order) on a closed store file.
func checkFile(t testing.TB, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}), "bbolt check of %s", path)
}

// insert stores n new EO messages, each Update holding perUpdate of them.
func insert(t testing.TB, s *Store, n, perUpdate int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		err := s.Update(t.Context(), func(w store.Writer) error {
			for range min(perUpdate, n-len(ids)) {
				m := storetest.NewMessage()
				if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
					return err
				}
				ids = append(ids, m.ID)
			}
			return nil
		})
		require.NoError(t, err)
	}
	return ids
}

func TestGroupCommit(t *testing.T) {
	t.Parallel()

	t.Run("ConcurrentUpdatesShareOneCommit", func(t *testing.T) {
		t.Parallel()
		s := openTestStore(t)
		const n = 16
		lineUp(s, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				m := storetest.NewMessage()
				errs <- s.Update(t.Context(), func(w store.Writer) error {
					return w.Insert(m.Clone(), storetest.PayloadOf(m), storetest.Entry("received"))
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, uint64(1), s.Commits())
		requireCount(t, s, n)
	})

	t.Run("FailingUpdateLeavesTheOthersIntact", func(t *testing.T) {
		t.Parallel()
		s := openTestStore(t)
		const n = 8
		lineUp(s, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				m := storetest.NewMessage()
				errs <- s.Update(t.Context(), func(w store.Writer) error {
					if err := w.Insert(m.Clone(), storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
						return err
					}
					if i == 3 {
						return errBoom
					}
					return nil
				})
			})
		}
		wg.Wait()
		close(errs)
		failed := 0
		for err := range errs {
			if err != nil {
				require.ErrorIs(t, err, errBoom)
				failed++
			}
		}
		require.Equal(t, 1, failed)
		require.Equal(t, uint64(1), s.Commits(), "the others commit once; the failed batch and the failing fn alone commit nothing")
		requireCount(t, s, n-1)
	})
}

var errBoom = errors.New("boom")

// lineUp makes the first commit of s wait until n Updates have queued, so
// that they share it.
func lineUp(s *Store, n int) {
	queued := make(chan struct{}, n)
	var once sync.Once
	s.group.queued = func() { queued <- struct{}{} }
	s.group.hold = func() {
		once.Do(func() {
			for range n {
				<-queued
			}
		})
	}
}

// requireCount checks how many messages the store holds.
func requireCount(t *testing.T, s *Store, want int) {
	t.Helper()
	n := 0
	require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
		return r.Messages(store.MessageFilter{}, func(*domain.Message) error { n++; return nil })
	}))
	require.Equal(t, want, n)
}

func TestClose(t *testing.T) {
	t.Parallel()

	t.Run("UpdateUnderWayFinishes", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "queuectl.db")
		s, err := Open(path, Options{NoSync: true})
		require.NoError(t, err)
		started, release := make(chan struct{}), make(chan struct{})
		updated := make(chan error, 1)
		m := storetest.NewMessage()
		go func() {
			updated <- s.Update(t.Context(), func(w store.Writer) error {
				select {
				case <-started:
				default:
					close(started)
				}
				<-release
				return w.Insert(m.Clone(), storetest.PayloadOf(m), storetest.Entry("received"))
			})
		}()
		<-started
		closed := make(chan error, 1)
		go func() { closed <- s.Close() }()
		close(release)
		require.NoError(t, <-updated)
		require.NoError(t, <-closed)
		require.NoError(t, s.Close(), "closing twice is fine")

		err = s.Update(t.Context(), func(store.Writer) error { return nil })
		require.ErrorIs(t, err, domain.ErrUnavailable)
		require.ErrorIs(t, s.View(t.Context(), func(store.Reader) error { return nil }), domain.ErrUnavailable)

		s, err = Open(path, Options{NoSync: true})
		require.NoError(t, err)
		require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
			_, err := r.Message(m.ID)
			return err
		}))
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
}

func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{})
	require.NoError(t, err)
	ids := insert(t, s, 30, 7)
	binary := []byte{0, 1, 2, 0xfe, 0xff, 0}
	pend := storetest.WithStatus(storetest.NewMessage(), domain.StatusPEND)
	audit := &domain.AuditEntry{At: storetest.At(1), Actor: "ops", Action: "queue stop", Targets: []string{"XBTI0000"}, Result: domain.AuditOK}
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		if err := w.Insert(pend, binary, storetest.Entry("prepared")); err != nil {
			return err
		}
		if _, err := w.Transition(store.TransitionParams{ID: ids[0], From: []domain.Status{domain.StatusTBDL}, To: domain.StatusDLNG}); err != nil {
			return err
		}
		if err := w.SetStopped(pend.Queue, true); err != nil {
			return err
		}
		if err := w.SetParam(domain.Param{Name: "EO_INBOUND_PARALLEL", Sub: "CENTRAL", Value: 12}); err != nil {
			return err
		}
		return w.AppendAudit(audit)
	}))
	var before *store.QueueRecord
	require.NoError(t, s.View(t.Context(), func(r store.Reader) (err error) {
		before, err = r.Queue(pend.Queue)
		return err
	}))
	require.NoError(t, s.Close())

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	require.Equal(t, uint64(0), s.Commits(), "Commits counts from Open")
	require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
		q, err := r.Queue(pend.Queue)
		if err != nil {
			return err
		}
		if fmt.Sprint(q) != fmt.Sprint(before) {
			return fmt.Errorf("queue after reopen %+v, before %+v", q, before)
		}
		p, err := r.Payload(pend.ID)
		if err != nil || string(p) != string(binary) {
			return fmt.Errorf("payload after reopen %q, %v", p, err)
		}
		m, err := r.Message(ids[0])
		if err != nil || m.Status != domain.StatusDLNG {
			return fmt.Errorf("message after reopen %+v, %v", m, err)
		}
		if v, ok, err := r.Param("EO_INBOUND_PARALLEL", "CENTRAL"); v != 12 || !ok || err != nil {
			return fmt.Errorf("param after reopen %d %t %v", v, ok, err)
		}
		return r.Audit(store.AuditFilter{}, func(e *domain.AuditEntry) error {
			if fmt.Sprint(e) != fmt.Sprint(audit) {
				return fmt.Errorf("audit after reopen %+v, want %+v", e, audit)
			}
			return nil
		})
	}))
	more := insert(t, s, 1, 1)
	require.NoError(t, s.View(t.Context(), func(r store.Reader) error {
		m, err := r.Message(more[0])
		if err == nil && m.Seq != 31 {
			err = fmt.Errorf("seq after reopen is %d, want 31", m.Seq)
		}
		return err
	}))
}

// One message the store cannot read is skipped by the claim and refused by
// an outcome; every other message goes on.
func TestDamagedMessageStopsNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	parent := storetest.NewMessage()
	damaged, good := storetest.NewOutboundMessage(parent, storetest.ReceiverWMS), storetest.NewOutboundMessage(parent, storetest.ReceiverWMS)
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		for _, m := range []*domain.Message{damaged, good} {
			if err := w.Insert(m, []byte("x"), storetest.Entry("sent")); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		key, _ := parseID(damaged.ID)
		return tx.Bucket([]byte(bucketMessages)).Put(key[:], []byte{recordV1, 0})
	})

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	j, err := s.Join(t.Context(), store.JoinParams{ID: "N1", Receivers: storetest.Receivers})
	require.NoError(t, err)
	res, err := s.Claim(t.Context(), store.ClaimParams{Node: j.Node, Limit: 10, Window: 32, Receivers: storetest.Receivers})
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1)
	require.Equal(t, good.ID, res.Claimed[0].Message.ID)
	require.Contains(t, res.Damaged, damaged.ID)

	rec, err := s.Record(t.Context(), store.RecordParams{Node: j.Node, Outcomes: []store.Outcome{
		{ID: damaged.ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeDelivered},
		{ID: good.ID, Epoch: res.Claimed[0].Epoch, Kind: store.OutcomeDelivered},
	}})
	require.NoError(t, err)
	require.Contains(t, rec.Damaged, damaged.ID)
	require.Empty(t, rec.Conflicts)
	require.Equal(t, domain.StatusDLVD, rec.Applied[1].Status)
}

// TestRecordDamaged: an outcome batch with one record the store cannot
// read records the others.
func TestRecordDamaged(t *testing.T) {
	t.Parallel()
	storetest.RunRecordDamaged(t, func(t *testing.T) store.Store { return openTestStore(t) },
		func(t *testing.T, st store.Store, id string) func() {
			s := st.(*Store)
			key, _ := parseID(id)
			var was []byte
			require.NoError(t, s.db.Update(func(tx *bbolt.Tx) error {
				b := tx.Bucket([]byte(bucketMessages))
				was = append([]byte{}, b.Get(key[:])...)
				return b.Put(key[:], []byte{recordV1, 0})
			}))
			return func() {
				require.NoError(t, s.db.Update(func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte(bucketMessages)).Put(key[:], was)
				}))
			}
		})
}
