package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
	"github.com/queuectl/queuectl/internal/store"
)

// editable are the statuses an operator edits a payload in (§5).
var editable = []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}

func testEditPayload(t *testing.T, open Opener) {
	t.Run("StoresANewVersionAndKeepsTheOriginal", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NotDelivered(NewMessage(), domain.ErrorPermanent)
		other := NotDelivered(NewMessage(), domain.ErrorPermanent)
		b.insert(t, m, other)
		before := b.message(t, m.ID)
		counts := b.counts(t, m.Queue)
		require.Equal(t, 1, b.versions(t, m.ID), "a message sent is at version 1")

		h := domain.HistoryEntry{At: At(7), Actor: "ops", Reason: "payload edited"}
		got, err := b.edit(t, store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("<order fixed/>"), History: h})
		require.NoError(t, err)
		require.Equal(t, got, b.message(t, m.ID), "the returned message is the one stored")
		require.Equal(t, int64(len("<order fixed/>")), got.Size)
		require.Equal(t, before.Status, got.Status)
		require.Equal(t, before.Queue, got.Queue, "it stays in its queue")
		require.Equal(t, before.Seq, got.Seq, "and in its place in the queue")
		require.Equal(t, At(7), got.UpdatedAt)
		require.Equal(t, counts, b.counts(t, m.Queue), "the counters do not change")

		require.Equal(t, []byte("<order fixed/>"), b.payload(t, m.ID))
		require.Equal(t, 2, b.versions(t, m.ID))
		require.Equal(t, PayloadOf(m), b.version(t, m.ID, 1), "the original is kept")
		require.Equal(t, []byte("<order fixed/>"), b.version(t, m.ID, 2))
		require.Equal(t, PayloadOf(other), b.payload(t, other.ID), "another message's payload is its own")
		require.Equal(t, 1, b.versions(t, other.ID))

		hist := b.history(t, m.ID)
		h.From, h.To = domain.StatusNDLV, domain.StatusNDLV
		require.Equal(t, h, hist[len(hist)-1])

		_, err = b.edit(t, store.EditPayloadParams{ID: m.ID, From: editable, Version: 2, Payload: []byte{}, History: Entry("emptied")})
		require.NoError(t, err, "an empty payload is a payload")
		require.Equal(t, 3, b.versions(t, m.ID))
		require.Empty(t, b.payload(t, m.ID))
		require.Equal(t, []byte("<order fixed/>"), b.version(t, m.ID, 2))
		require.Equal(t, PayloadOf(m), b.version(t, m.ID, 1))
		requireConsistent(t, b)
	})

	t.Run("VersionsItDoesNotHaveAreNotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NotDelivered(NewMessage(), domain.ErrorPermanent)
		b.insert(t, m)
		require.Equal(t, PayloadOf(m), b.version(t, m.ID, 1), "version 1 is the payload sent")
		for _, n := range []int{0, -1, 2} {
			err := b.store.View(b.ctx, func(r store.Reader) error {
				_, err := r.PayloadVersion(m.ID, n)
				return err
			})
			require.ErrorIs(t, err, domain.ErrNotFound, "version %d", n)
		}
		err := b.store.View(b.ctx, func(r store.Reader) error {
			_, err := r.PayloadVersions(domain.NewID())
			return err
		})
		require.ErrorIs(t, err, domain.ErrNotFound)
		_, err = b.edit(t, store.EditPayloadParams{ID: domain.NewID(), From: editable, Version: 1, Payload: []byte("x"), History: Entry("")})
		require.ErrorIs(t, err, domain.ErrNotFound)
	})

	t.Run("RefusesAnotherStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NewMessage() // TBDL
		b.insert(t, m)
		_, err := b.edit(t, store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("x"), History: Entry("")})
		require.ErrorIs(t, err, domain.ErrConflict)
		require.Contains(t, err.Error(), "TBDL")
		require.Equal(t, PayloadOf(m), b.payload(t, m.ID), "nothing changed")
		require.Equal(t, 1, b.versions(t, m.ID))
		require.Len(t, b.history(t, m.ID), 1)
	})

	t.Run("RefusesAStaleVersion", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewEOIOMessage("ORDERS"), domain.StatusHOLD)
		b.insert(t, m)
		_, err := b.edit(t, store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("first"), History: Entry("")})
		require.NoError(t, err)
		_, err = b.edit(t, store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("second"), History: Entry("")})
		require.ErrorIs(t, err, store.ErrVersionChanged)
		require.ErrorIs(t, err, domain.ErrConflict)
		require.Equal(t, []byte("first"), b.payload(t, m.ID), "the later edit changed nothing")
		require.Equal(t, 2, b.versions(t, m.ID))
		requireConsistent(t, b)
	})

	t.Run("ASplitMessageGetsAPayloadOfItsOwn", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		in := NewMessage()
		in.Receivers = []string{ReceiverWMS, ReceiverARCHIVE}
		router := &placement.Router{Placer: placement.Placer{Role: domain.RoleCentral, Rand: func(int) int { return 0 }}}
		var created []*domain.Message
		b.update(t, func(w store.Writer) error {
			if err := w.Insert(in, PayloadOf(in), Entry("received")); err != nil {
				return err
			}
			res, err := w.Route(store.RouteParams{ID: in.ID, Router: router, Entry: Entry("")})
			if err != nil {
				return err
			}
			created = res.Created
			for _, c := range created {
				if _, err := w.Transition(store.TransitionParams{ID: c.ID, From: []domain.Status{domain.StatusTBDL},
					To: domain.StatusNDLV, History: Entry("rejected")}); err != nil {
					return err
				}
			}
			return nil
		})
		require.Len(t, created, 2)
		edited, sibling := created[0], created[1]
		_, err := b.edit(t, store.EditPayloadParams{ID: edited.ID, From: editable, Version: 1, Payload: []byte("<fixed/>"), History: Entry("")})
		require.NoError(t, err)
		require.Equal(t, []byte("<fixed/>"), b.payload(t, edited.ID))
		require.Equal(t, PayloadOf(in), b.version(t, edited.ID, 1))
		require.Equal(t, PayloadOf(in), b.payload(t, sibling.ID), "the other receiver's copy is unchanged")
		require.Equal(t, PayloadOf(in), b.payload(t, in.ID))
		requireConsistent(t, b)

		// The versions outlive the messages the payload was shared with.
		b.update(t, func(w store.Writer) error {
			for _, id := range []string{sibling.ID, in.ID} {
				if err := w.Delete(id); err != nil {
					return err
				}
			}
			return nil
		})
		require.Equal(t, PayloadOf(in), b.version(t, edited.ID, 1))
		require.Equal(t, []byte("<fixed/>"), b.payload(t, edited.ID))
		b.update(t, func(w store.Writer) error { return w.Delete(edited.ID) })
		err = b.store.View(b.ctx, func(r store.Reader) error {
			_, err := r.PayloadVersion(edited.ID, 1)
			return err
		})
		require.ErrorIs(t, err, domain.ErrNotFound, "the versions go with their message")
		requireConsistent(t, b)
	})

	t.Run("AnEditIsReadBackInItsTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := WithStatus(NewMessage(), domain.StatusWAIT)
		b.insert(t, m)
		b.update(t, func(w store.Writer) error {
			if _, err := w.EditPayload(store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("v2"), History: Entry("")}); err != nil {
				return err
			}
			p, err := w.Payload(m.ID)
			require.NoError(t, err)
			require.Equal(t, []byte("v2"), p)
			n, err := w.PayloadVersions(m.ID)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			_, err = w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusWAIT}, To: domain.StatusTBDL, History: Entry("resent")})
			return err
		})
		require.Equal(t, domain.StatusTBDL, b.message(t, m.ID).Status)
		require.Equal(t, int64(2), b.message(t, m.ID).Size)
		requireConsistent(t, b)
	})

	t.Run("ARolledBackEditLeavesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, open)
		m := NotDelivered(NewMessage(), domain.ErrorTransient)
		b.insert(t, m)
		errRollback := errors.New("roll back")
		err := b.store.Update(b.ctx, func(w store.Writer) error {
			if _, err := w.EditPayload(store.EditPayloadParams{ID: m.ID, From: editable, Version: 1, Payload: []byte("v2"), History: Entry("")}); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.Equal(t, PayloadOf(m), b.payload(t, m.ID))
		require.Equal(t, 1, b.versions(t, m.ID))
		requireConsistent(t, b)
	})
}

// edit runs one EditPayload in its own Update.
func (b *testBundle) edit(t *testing.T, p store.EditPayloadParams) (*domain.Message, error) {
	t.Helper()
	var out *domain.Message
	err := b.store.Update(b.ctx, func(w store.Writer) error {
		m, err := w.EditPayload(p)
		out = m
		return err
	})
	return out, err
}

func (b *testBundle) versions(t *testing.T, id string) int {
	t.Helper()
	var n int
	b.view(t, func(r store.Reader) error {
		var err error
		n, err = r.PayloadVersions(id)
		return err
	})
	return n
}

func (b *testBundle) version(t *testing.T, id string, n int) []byte {
	t.Helper()
	var p []byte
	b.view(t, func(r store.Reader) error {
		var err error
		p, err = r.PayloadVersion(id, n)
		return err
	})
	return p
}
