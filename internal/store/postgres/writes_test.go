package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// The writes a transaction holds back reach the rows as it made them: a
// message inserted and changed twice in one Update — once in the columns
// a status change sets, once in its receivers and headers — reads back as
// the last change returned it, with its three history entries in order, and
// the queue's counters count it once.
func TestWritesHeldBackLandInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := storetest.NewMessage()
	other := storetest.NewMessage()
	var last *domain.Message
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		for _, x := range []*domain.Message{m, other} {
			if err := w.Insert(x, storetest.PayloadOf(x), storetest.Entry("received")); err != nil {
				return err
			}
		}
		if _, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL},
			To: domain.StatusDLNG, Update: func(x *domain.Message) { x.Attempts++ }, History: storetest.Entry("claimed")}); err != nil {
			return err
		}
		var err error
		last, err = w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusDLNG},
			To: domain.StatusNDLV, Update: func(x *domain.Message) {
				x.Error, x.ErrorClass = "refused", domain.ErrorPermanent
				x.Receivers, x.Headers = []string{"ARCHIVE", "WMS"}, map[string]string{"k": "v"}
			}, History: storetest.Entry("failed")})
		return err
	}))
	var got *domain.Message
	var history []domain.HistoryEntry
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		if got, err = r.Message(m.ID); err != nil {
			return err
		}
		history, err = r.History(m.ID)
		return err
	}))
	require.Equal(t, last, got)
	require.Equal(t, []string{"ARCHIVE", "WMS"}, got.Receivers)
	require.Equal(t, 1, got.Attempts)
	require.Len(t, history, 3)
	for i, to := range []domain.Status{domain.StatusTBDL, domain.StatusDLNG, domain.StatusNDLV} {
		require.Equal(t, to, history[i].To, "entry %d", i)
	}
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		history, err := r.History(other.ID)
		require.Len(t, history, 1, "the other message's history is its own")
		return err
	}))
}
