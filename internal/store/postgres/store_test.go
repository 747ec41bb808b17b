package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}

// testBundle is a store on a schema of its own, with a connection to the
// schema for looking at and changing the rows directly.
type testBundle struct {
	ctx  context.Context
	url  string
	st   *postgres.Store
	conn *pgx.Conn
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{ctx: context.Background(), url: pgtest.URL(t)}
	var err error
	b.st, err = postgres.Open(b.ctx, b.url, postgres.Options{Migrate: true})
	require.NoError(t, err)
	b.conn, err = pgx.Connect(b.ctx, b.url)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, b.conn.Close(b.ctx))
		require.NoError(t, b.st.Check(b.ctx))
		require.NoError(t, b.st.Close())
	})
	return b
}

func (b *testBundle) insert(t *testing.T, msgs ...*domain.Message) {
	t.Helper()
	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error {
		for _, m := range msgs {
			if err := w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received")); err != nil {
				return err
			}
		}
		return nil
	}))
}

func (b *testBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, sql, args...).Scan(&n))
	return n
}

func TestSharedPayloadGoesWithTheLastMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	in := storetest.NewMessage()
	b.insert(t, in)
	// An outbound copy that shares the inbound message's payload, as a
	// routed outcome makes it.
	out := storetest.NewOutboundMessage(in, storetest.ReceiverWMS)
	_, err := b.conn.Exec(b.ctx, `
		WITH o AS (INSERT INTO messages (id, seq, size, payload_id, parent_id, created_at, updated_at, queue, status,
				qos, stage, sender, receiver, history)
			SELECT $2, 1, size, payload_id, id, created_at, updated_at, $3, 'TBDL', qos, 'outbound', sender, $4, history
			FROM messages WHERE id = $1 RETURNING payload_id),
		r AS (UPDATE payloads SET refs = refs + 1 WHERE id = (SELECT payload_id FROM o))
		INSERT INTO queues (name, qos, stage, receiver, last_seq, n_tbdl, created_at)
			VALUES ($3, 'EO', 'outbound', $4, 1, 1, now())`,
		in.ID, out.ID, out.Queue, out.Receiver)
	require.NoError(t, err)
	require.NoError(t, b.st.Check(b.ctx))

	payload := func(id string) []byte {
		var p []byte
		require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
			var err error
			p, err = r.Payload(id)
			return err
		}))
		return p
	}
	require.Equal(t, storetest.PayloadOf(in), payload(out.ID), "the copy reads the shared payload")

	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error { return w.Delete(in.ID) }))
	require.Equal(t, storetest.PayloadOf(in), payload(out.ID), "the payload stays while a message shares it")
	require.Equal(t, 1, b.count(t, `SELECT refs FROM payloads`))

	require.NoError(t, b.st.Update(b.ctx, func(w store.Writer) error { return w.Delete(out.ID) }))
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM payloads`), "the payload goes with the last message")
}

func TestCompareAndSetAcrossProcesses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Each racer has a pool of its own, as a node or an admin command has.
	const racers = 6
	stores := make([]*postgres.Store, racers)
	for i := range stores {
		st, err := postgres.Open(b.ctx, b.url, postgres.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		stores[i] = st
	}
	var msgs []*domain.Message
	for range 20 {
		msgs = append(msgs, storetest.NewMessage())
	}
	b.insert(t, msgs...)

	won := make([]int, len(msgs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for n, st := range stores {
		wg.Go(func() {
			for i, m := range msgs {
				err := st.Update(b.ctx, func(w store.Writer) error {
					_, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL},
						To: domain.StatusDLNG, History: domain.HistoryEntry{Node: fmt.Sprintf("node-%d", n), Actor: "engine"}})
					return err
				})
				if err == nil {
					mu.Lock()
					won[i]++
					mu.Unlock()
					continue
				}
				if !errors.Is(err, domain.ErrConflict) {
					t.Errorf("racer %d, message %d: %v, want a conflict", n, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, n := range won {
		require.Equal(t, 1, n, "message %d: exactly one compare-and-set wins", i)
	}
	require.Equal(t, len(msgs), b.count(t, `SELECT n_dlng FROM queues`))
}

func TestTextPostgreSQLCannotHoldIsReplaced(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := storetest.NewMessage()
	m.Error = "exit 1: bad\x00byte \xff end"
	m.Headers = map[string]string{"X-Note": "a\x00b"}
	b.insert(t, m)
	var got *domain.Message
	require.NoError(t, b.st.View(b.ctx, func(r store.Reader) error {
		var err error
		got, err = r.Message(m.ID)
		return err
	}))
	require.Equal(t, "exit 1: bad\uFFFDbyte \uFFFD end", got.Error)
	require.Equal(t, "a\uFFFDb", got.Headers["X-Note"])
}
