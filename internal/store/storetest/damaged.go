package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// Damager damages the stored record of message id of st so that the store
// can no longer read it, as a failing disk or a stray write would, and
// returns a function that repairs it (for the store's checks at cleanup).
type Damager func(t *testing.T, st store.Store, id string) (repair func())

// RunRecordDamaged checks that an outcome batch with one message the store
// cannot read records every other outcome and names the bad one in
// RecordResult.Damaged, rather than failing as a whole: a batch that fails
// is retried, and one bad record would stop all recording.
func RunRecordDamaged(t *testing.T, open Opener, damage Damager) {
	for _, tt := range []struct {
		name string
		msgs func() []*domain.Message
	}{
		{"EO", func() []*domain.Message { return outbound(3) }},
		// Each EOIO message in a queue of its own, so that one claim takes
		// all three heads.
		{"EOIO", func() []*domain.Message {
			return []*domain.Message{eoioOutbound("A", 1)[0], eoioOutbound("B", 1)[0], eoioOutbound("C", 1)[0]}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := setupEngine(t, open)
			msgs := tt.msgs()
			e.insert(t, msgs...)
			res := e.claim(t, 10)
			require.Len(t, res.Claimed, 3)
			byID := map[string]store.Claimed{}
			for _, c := range res.Claimed {
				byID[c.Message.ID] = c
			}
			bad := msgs[1].ID
			repair := damage(t, e.store, bad)
			outcomes := []store.Outcome{delivered(byID[msgs[0].ID]), delivered(byID[bad]), delivered(byID[msgs[2].ID])}
			rec := e.record(t, nil, outcomes...)
			require.Empty(t, rec.Conflicts)
			require.Contains(t, rec.Damaged, bad, "the outcome of the message that cannot be read is named")
			require.ErrorContains(t, rec.Damaged[bad], bad)
			require.Nil(t, rec.Applied[1])
			for _, i := range []int{0, 2} {
				require.NotNil(t, rec.Applied[i], "the other outcomes are recorded")
				require.Equal(t, domain.StatusDLVD, rec.Applied[i].Status)
			}

			// Recorded again, as a completer would after a failure: the
			// bad one is named again, the others are refused as recorded.
			rec = e.record(t, nil, outcomes...)
			require.Contains(t, rec.Damaged, bad)
			require.Len(t, rec.Conflicts, 2)

			repair()
			for _, i := range []int{0, 2} {
				require.Equal(t, domain.StatusDLVD, e.message(t, msgs[i].ID).Status)
			}
			m := e.message(t, bad)
			// The embedded store wrote nothing to what it could not read;
			// PostgreSQL's statement applied the outcome before it read
			// the row back.
			require.Contains(t, []domain.Status{domain.StatusDLNG, domain.StatusDLVD}, m.Status)
		})
	}
}
