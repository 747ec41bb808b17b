package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// RCV0 and RCV1450 share their first choice of code, F8A4 (§3).
const (
	clashA = "RCV0"
	clashB = "RCV1450"
)

// testReceiverCodes: every receiver has outbound queues of its own (§3).
// The store assigns each its code once — its CRC code first, the next free
// code on a clash — and keeps it.
func testReceiverCodes(t *testing.T, open Opener) {
	t.Run("FirstChoiceThenNextFree", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		require.Equal(t, domain.Code4(clashA), domain.Code4(clashB), "the fixture's receivers clash")
		first := domain.Code4(clashA)
		var a, bb, again string
		b.update(t, func(w store.Writer) (err error) {
			if bb, err = store.AssignCode(w, clashB); err != nil {
				return err
			}
			a, err = store.AssignCode(w, clashA)
			return err
		})
		b.update(t, func(w store.Writer) (err error) {
			again, err = store.AssignCode(w, clashB)
			return err
		})
		require.Equal(t, first, bb, "the first to come gets its CRC code")
		require.Equal(t, domain.NextCode(first), a, "the next one gets the next free code")
		require.Equal(t, bb, again, "a code, once given, is kept")
		b.view(t, func(r store.Reader) error {
			code, err := r.ReceiverCode(clashA)
			require.NoError(t, err)
			require.Equal(t, a, code)
			_, err = r.ReceiverCode("NOBODY")
			require.ErrorIs(t, err, domain.ErrNotFound)
			got := map[string]string{}
			require.NoError(t, r.ReceiverCodes(func(rc, code string) error { got[rc] = code; return nil }))
			require.Equal(t, map[string]string{clashA: a, clashB: bb}, got)
			return nil
		})
	})

	t.Run("PutRefusesTakenCodes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.update(t, func(w store.Writer) error {
			ok, err := w.PutReceiverCode("WMS", "0001")
			require.NoError(t, err)
			require.True(t, ok)
			ok, err = w.PutReceiverCode("CRM", "0001")
			require.NoError(t, err)
			require.False(t, ok, "another receiver's code")
			ok, err = w.PutReceiverCode("WMS", "0002")
			require.NoError(t, err)
			require.False(t, ok, "a receiver keeps its code")
			_, err = w.PutReceiverCode("CRM", "zz")
			require.ErrorIs(t, err, domain.ErrInvalid)
			return nil
		})
	})

	t.Run("RolledBackCodeIsNotKept", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if _, err := store.AssignCode(w, clashA); err != nil {
				return err
			}
			return domain.Invalidf("rolled back")
		})
		require.ErrorIs(t, err, domain.ErrInvalid)
		var code string
		b.update(t, func(w store.Writer) (err error) {
			code, err = store.AssignCode(w, clashB)
			return err
		})
		require.Equal(t, domain.Code4(clashB), code, "the code of a rolled back transaction is free")
	})

	t.Run("ClashingReceiversGetQueuesOfTheirOwn", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		router := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }}}
		eo, eoio := NewMessage(), NewEOIOMessage("ORDERS")
		eo.Receivers, eoio.Receivers = []string{clashA, clashB}, []string{clashB, clashA}
		queues := map[string]map[string]bool{} // receiver → its queues
		b.update(t, func(w store.Writer) error {
			for _, m := range []*domain.Message{eo, eoio} {
				if err := w.Insert(m, PayloadOf(m), Entry("received")); err != nil {
					return err
				}
				if _, err := w.Route(store.RouteParams{ID: m.ID, Router: router, Entry: Entry("")}); err != nil {
					return err
				}
			}
			return nil
		})
		b.view(t, func(r store.Reader) error {
			return r.Messages(store.MessageFilter{}, func(m *domain.Message) error {
				if m.Stage == domain.Outbound {
					if queues[m.Receiver] == nil {
						queues[m.Receiver] = map[string]bool{}
					}
					queues[m.Receiver][m.Queue] = true
				}
				return nil
			})
		})
		require.Len(t, queues[clashA], 2, "an EO and an EOIO queue")
		require.Len(t, queues[clashB], 2)
		for q := range queues[clashA] {
			require.False(t, queues[clashB][q], "queue %s is shared", q)
		}
		b.view(t, func(r store.Reader) error {
			return r.Queues("", func(q *store.QueueRecord) error {
				if q.Stage == domain.Outbound {
					require.True(t, queues[q.Receiver][q.Name], "queue %s is listed under its receiver", q.Name)
				}
				return nil
			})
		})
	})

	t.Run("PlanTellsClashes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		b.update(t, func(w store.Writer) error {
			_, err := store.AssignCode(w, clashB)
			return err
		})
		var plans []domain.CodePlan
		b.view(t, func(r store.Reader) (err error) {
			plans, err = store.PlanCodes(r, []string{clashA, clashB, "WMS"})
			return err
		})
		first := domain.Code4(clashA)
		require.Equal(t, []domain.CodePlan{
			{Receiver: clashA, Code: domain.NextCode(first), Clash: clashB},
			{Receiver: clashB, Code: first, Assigned: true},
			{Receiver: "WMS", Code: domain.Code4("WMS")},
		}, plans)
	})
}

// testClusterReceiverCodes: the nodes of a cluster read one receiver's
// code alike, whichever of them met the receiver first.
func testClusterReceiverCodes(t *testing.T, open ClusterOpener) {
	c := setupCluster(t, open)
	var codeA, codeB, seenA, seenB string
	require.NoError(t, c.a.(store.Store).Update(c.ctx, func(w store.Writer) (err error) {
		codeB, err = store.AssignCode(w, clashB)
		return err
	}))
	require.NoError(t, c.b.(store.Store).Update(c.ctx, func(w store.Writer) (err error) {
		if seenB, err = store.AssignCode(w, clashB); err != nil {
			return err
		}
		codeA, err = store.AssignCode(w, clashA)
		return err
	}))
	require.NoError(t, c.a.(store.Store).Update(c.ctx, func(w store.Writer) (err error) {
		seenA, err = store.AssignCode(w, clashA)
		return err
	}))
	require.Equal(t, codeB, seenB, "the other node reads the code the first one gave")
	require.Equal(t, codeA, seenA)
	require.NotEqual(t, codeA, codeB)
}
