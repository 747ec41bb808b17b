package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/storetest"
)

// TestJoinForgetsCrashesNothingCanTakeBack: the record of a crash counted
// against an incarnation is kept for its process to take back; a join
// forgets those whose message was purged or has no crash left, so that
// nodes whose ids never come back leave nothing behind. The others stay.
func TestJoinForgetsCrashesNothingCanTakeBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	crashed, released := storetest.NewMessage(), storetest.NewMessage()
	crashed.Crashes, crashed.ErrorClass, crashed.Error = 1, domain.ErrorCrash, "the engine process died while delivering it"
	b.insert(t, crashed, released)
	_, err := b.conn.Exec(b.ctx, `INSERT INTO counted_crashes (incarnation, message, crash, counted_at) VALUES
		(9001, $1, 1, now()), (9001, $2, 1, now()), (9002, gen_random_uuid(), 2, now())`, crashed.ID, released.ID)
	require.NoError(t, err)

	_, err = b.st.Join(b.ctx, store.JoinParams{ID: "N7", TTL: time.Hour, Heartbeat: time.Second})
	require.NoError(t, err)
	var left []string
	rows, err := b.conn.Query(b.ctx, `SELECT message::text FROM counted_crashes ORDER BY message`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		left = append(left, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{crashed.ID}, left, "the crash of a message that still has it is kept")
}
