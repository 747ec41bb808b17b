package bolt

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// testClock is a store clock that tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestCheckRecordsDecodeAcrossVersions(t *testing.T) {
	t.Parallel()
	m := storetest.Prepared(storetest.NewMessage())
	key := idOf(m.ID)
	plain, err := encodeMessage(key, m, form{})
	require.NoError(t, err)
	require.Zero(t, plain[1]&msgChecked, "a message never checked is written as before the check-back existed")

	at := storetest.At(7)
	m.Checks, m.LastCheckAt, m.LastAnswer, m.Stuck = 3, &at, "HTTP 503", true
	v, err := encodeMessage(key, m, form{})
	require.NoError(t, err)
	got, err := decodeMessage(key[:], v, false)
	require.NoError(t, err)
	require.Equal(t, m, got.Message, "the check-back's fields round-trip")

	q := &store.QueueRecord{Name: "XBTI0000", QoS: domain.EO, Stage: domain.Inbound, CreatedAt: at,
		Counts: map[domain.Status]int64{domain.StatusPEND: 4}, Stuck: 2}
	rec := encodeQueue(q)
	back, err := decodeQueue(q.Name, rec, false)
	require.NoError(t, err)
	require.Equal(t, q, back)
	// A queue record written before the stuck counter existed ends with the
	// counts: it reads as no stuck transaction.
	old1 := unsealedRecord(rec)
	old, err := decodeQueue(q.Name, old1[:len(old1)-1], true)
	require.NoError(t, err)
	require.Zero(t, old.Stuck)
	require.Equal(t, q.Counts, old.Counts)
}

func TestOpenIndexesThePreparedMessagesOfAnOlderStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	p := storetest.Prepared(storetest.NewMessage())
	p.CreatedAt = storetest.Now().Add(-time.Hour)
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		return w.Insert(p, nil, storetest.Entry("prepared"))
	}))
	require.NoError(t, s.Close())
	// The store as a queuectl from before the check-back left it.
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte(bucketChecks)) }))
	require.NoError(t, db.Close())

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	j, err := s.Join(t.Context(), store.JoinParams{ID: "N1", Receivers: storetest.Receivers})
	require.NoError(t, err)
	res, err := s.ClaimChecks(t.Context(), store.ClaimChecksParams{Node: j.Node, After: time.Minute, Interval: time.Minute, Limit: 10})
	require.NoError(t, err)
	require.Len(t, res.Claimed, 1, "the PEND message of the older store is checked")
	require.Equal(t, p.ID, res.Claimed[0].ID)
}

func TestClaimChecksOnTheStoreClock(t *testing.T) {
	t.Parallel()
	clock := &testClock{now: storetest.At(0)}
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true, Clock: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	ctx := t.Context()
	j, err := s.Join(ctx, store.JoinParams{ID: "N1", Receivers: storetest.Receivers})
	require.NoError(t, err)
	p := storetest.Prepared(storetest.NewMessage())
	p.CreatedAt = time.Time{} // the store's clock stamps it
	require.NoError(t, s.Update(ctx, func(w store.Writer) error { return w.Insert(p, nil, storetest.Entry("prepared")) }))
	claim := func() *store.ClaimChecksResult {
		t.Helper()
		res, err := s.ClaimChecks(ctx, store.ClaimChecksParams{Node: j.Node, After: 30 * time.Second, Interval: 10 * time.Second, Limit: 10})
		require.NoError(t, err)
		return res
	}

	res := claim()
	require.Empty(t, res.Claimed)
	require.Equal(t, storetest.At(0).Add(30*time.Second), res.NextDue, "due tx.check_after after it was prepared")
	clock.Add(30 * time.Second)
	res = claim()
	require.Len(t, res.Claimed, 1, "due exactly then")
	require.Equal(t, storetest.At(0).Add(30*time.Second), *res.Claimed[0].LastCheckAt)
	require.Equal(t, storetest.At(0).Add(40*time.Second), res.NextDue, "due again tx.check_interval after its check")
	clock.Add(9 * time.Second)
	res = claim()
	require.Empty(t, res.Claimed)
	require.Equal(t, storetest.At(0).Add(40*time.Second), res.NextDue, "due again tx.check_interval after its check")
	clock.Add(time.Second)
	require.Len(t, claim().Claimed, 1)
}

// A store of the version before one message kept one id (§3) and before
// idempotency keys (§2) — inbound messages routed into copies, no keys
// bucket — opens and works on: its routed copies are delivered as they
// are, and what is sent now keeps its id.
func TestOpenAStoreOfTheVersionBeforeKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	in := storetest.WithStatus(storetest.NewMessage(), domain.StatusDLVD)
	copyOf := storetest.NewOutboundMessage(in, storetest.ReceiverWMS)
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		if err := w.Insert(in, storetest.PayloadOf(in), storetest.Entry("received")); err != nil {
			return err
		}
		return w.Insert(copyOf, storetest.PayloadOf(copyOf), storetest.Entry("receiver determination"))
	}))
	require.NoError(t, s.Close())
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte(bucketKeys)) }))
	require.NoError(t, db.Close())

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	j, err := s.Join(t.Context(), store.JoinParams{ID: "N1", Receivers: storetest.Receivers})
	require.NoError(t, err)
	sent := storetest.NewMessage()
	sent.Key = "after-the-upgrade"
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		return w.Insert(sent, storetest.PayloadOf(sent), storetest.Entry("received"))
	}))
	router := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }}}
	res, err := s.Claim(t.Context(), store.ClaimParams{Node: j.Node, Limit: 10, Window: 32, Router: router, RouteLimit: 10, Receivers: storetest.Receivers})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{copyOf.ID, sent.ID}, []string{res.Claimed[0].Message.ID, res.Claimed[1].Message.ID},
		"the copy the older version routed, and the message sent now, under the id it was sent with")
}

func TestOpenGivesTheReceiversOfAnOlderStoreTheCodesOfTheirQueues(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queuectl.db")
	s, err := Open(path, Options{NoSync: true})
	require.NoError(t, err)
	shared := domain.Code4("RCV0") // RCV1450's too
	m := storetest.InQueue(storetest.NewOutboundMessage(storetest.NewMessage(), "RCV1450"), "XBTO"+shared)
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) error {
		return w.Insert(m, nil, storetest.Entry("routed"))
	}))
	require.NoError(t, s.Close())
	// The store as a queuectl from before receiver codes left it.
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket([]byte(bucketCodes)); err != nil {
			return err
		}
		return tx.DeleteBucket([]byte(bucketCodeOwners))
	}))
	require.NoError(t, db.Close())

	s, err = Open(path, Options{NoSync: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		checkFile(t, path)
	})
	var kept, own string
	require.NoError(t, s.Update(t.Context(), func(w store.Writer) (err error) {
		if kept, err = store.AssignCode(w, "RCV1450"); err != nil {
			return err
		}
		own, err = store.AssignCode(w, "RCV0")
		return err
	}))
	require.Equal(t, shared, kept, "its queues keep their names")
	require.Equal(t, domain.NextCode(shared), own, "the receiver that shared them gets queues of its own")
}
