package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// An EO send takes no lock of its queue's row (§14): a delete of the queue,
// empty as far as anything committed says, commits while the send is under
// way. The send's commit re-creates the row, counting its message — the
// message is never left in a queue without a record (Check at cleanup).
func TestDeleteQueueUnderAnEOSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := storetest.NewMessage()
	b.insert(t, first)
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error { return w.Delete(first.ID) }))

	m := storetest.NewMessage()
	placed, deleted := make(chan struct{}), make(chan error, 1)
	sent := make(chan error, 1)
	go func() {
		once := false
		sent <- b.st.Update(b.ctx, func(w store.Writer) error {
			if err := w.Insert(m.Clone(), storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
				return err
			}
			if !once {
				once = true
				close(placed)
				// The delete commits while this transaction is open.
				if err := <-deleted; err != nil {
					return err
				}
			}
			return nil
		})
	}()
	<-placed
	deleted <- b.st.Update(b.ctx, func(w store.Writer) error { return w.DeleteQueue(m.Queue) })
	require.NoError(t, <-sent)

	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM queues WHERE name = $1 AND n_tbdl = 1`, m.Queue))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM leases WHERE queue = $1`, m.Queue), "the lease row stayed")
	var q *store.QueueRecord
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		q, err = r.Queue(m.Queue)
		return err
	}))
	require.Equal(t, domain.EO, q.QoS)
	require.Equal(t, domain.Inbound, q.Stage)
	require.Equal(t, map[domain.Status]int64{domain.StatusTBDL: 1}, q.Counts)
}
