package postgres_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestWakeupsSurviveALostConnection kills the listener's connection: it
// reconnects, says so with a wakeup (notifications may have been missed),
// and passes notifications on again.
func TestWakeupsSurviveALostConnection(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u, err := url.Parse(pgtest.URL(t))
	require.NoError(t, err)
	name := "queuectl-test-" + domain.NewID()[:8]
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(ctx, u.String(), postgres.Options{Migrate: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	wait := func(what string) {
		t.Helper()
		select {
		case <-st.Wakeups():
		case <-ctx.Done():
			t.Fatalf("no wakeup %s", what)
		}
	}
	wait("when the listener listens")

	conn, err := pgx.Connect(ctx, pgtest.BaseURL(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var killed bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(bool_and(pg_terminate_backend(pid)), false)
		FROM pg_stat_activity WHERE application_name = $1`, name+" wakeups").Scan(&killed))
	require.True(t, killed, "the listener's connection is found and terminated")
	wait("when the listener listens again")

	m := storetest.NewMessage()
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		return w.Insert(m, storetest.PayloadOf(m), storetest.Entry("received"))
	}))
	wait("for a send after the reconnection")
}
