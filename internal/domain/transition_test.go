package domain_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

type move struct {
	from, to domain.Status
	by       domain.Actor
}

// allowedMoves is §4's transition list, written out here rather than read from
// domain.Transitions so that a change to the table has to be made twice.
var allowedMoves = map[move]bool{
	{domain.StatusPEND, domain.StatusTBDL, domain.ByEngine}: true, // commit
	{domain.StatusTBDL, domain.StatusDLNG, domain.ByEngine}: true,
	{domain.StatusDLNG, domain.StatusDLVD, domain.ByEngine}: true,
	{domain.StatusDLNG, domain.StatusWAIT, domain.ByEngine}: true, // transient, attempts left
	{domain.StatusWAIT, domain.StatusDLNG, domain.ByEngine}: true,
	{domain.StatusDLNG, domain.StatusNDLV, domain.ByEngine}: true, // permanent, exhausted, or blacklisted
	{domain.StatusDLNG, domain.StatusTBDL, domain.ByEngine}: true, // crash recovery, first crash
	{domain.StatusHOLD, domain.StatusTBDL, domain.ByEngine}: true, // blocking head resolved
	{domain.StatusTBDL, domain.StatusHOLD, domain.ByEngine}: true, // HOLD is stored: the head got blocked

	{domain.StatusNDLV, domain.StatusTBDL, domain.ByOperator}: true, // resend / release
	{domain.StatusNDLV, domain.StatusFAIL, domain.ByOperator}: true,
	{domain.StatusWAIT, domain.StatusTBDL, domain.ByOperator}: true, // retry now
	{domain.StatusWAIT, domain.StatusFAIL, domain.ByOperator}: true,
	{domain.StatusHOLD, domain.StatusFAIL, domain.ByOperator}: true,
	{domain.StatusPEND, domain.StatusTBDL, domain.ByOperator}: true, // tx commit
}

func TestAllowed(t *testing.T) {
	t.Parallel()

	require.Len(t, domain.Statuses, 8, "a new status needs its transitions added to this test")

	for _, by := range []domain.Actor{domain.ByEngine, domain.ByOperator} {
		for _, from := range domain.Statuses {
			for _, to := range domain.Statuses {
				m := move{from, to, by}
				t.Run(fmt.Sprintf("%s/%s->%s", by, from, to), func(t *testing.T) {
					t.Parallel()
					require.Equal(t, allowedMoves[m], domain.Allowed(m.from, m.to, m.by))
				})
			}
		}
	}
}

func TestAllowedFinalStatusesHaveNoWayOut(t *testing.T) {
	t.Parallel()

	for _, from := range []domain.Status{domain.StatusDLVD, domain.StatusFAIL} {
		require.True(t, from.Final())
		for _, to := range domain.Statuses {
			for _, by := range []domain.Actor{domain.ByEngine, domain.ByOperator} {
				require.False(t, domain.Allowed(from, to, by), "%s may leave final %s for %s", by, from, to)
			}
		}
	}
	for _, s := range domain.Statuses {
		require.Equal(t, s == domain.StatusDLVD || s == domain.StatusFAIL, s.Final(), "Final(%s)", s)
	}
}

func TestAllowedRefusesUnknownStatusesAndActors(t *testing.T) {
	t.Parallel()

	require.False(t, domain.Allowed("", domain.StatusTBDL, domain.ByOperator))
	require.False(t, domain.Allowed(domain.StatusNDLV, "DELETED", domain.ByOperator))
	require.False(t, domain.Allowed(domain.StatusNDLV, domain.StatusTBDL, domain.Actor(0)))
	require.False(t, domain.Allowed(domain.StatusNDLV, domain.StatusTBDL, domain.Actor(3)))
}

// The table must hold exactly §4's transitions: none missing (checked above)
// and none listed twice or with an unknown status.
func TestTransitionsTable(t *testing.T) {
	t.Parallel()

	seen := map[move]bool{}
	for _, tr := range domain.Transitions {
		m := move{tr.From, tr.To, tr.By}
		require.False(t, seen[m], "%s %s->%s listed twice", tr.By, tr.From, tr.To)
		seen[m] = true
		require.True(t, tr.From.Valid(), "from %q", tr.From)
		require.True(t, tr.To.Valid(), "to %q", tr.To)
		require.NotEmpty(t, tr.Why, "%s %s->%s has no reason", tr.By, tr.From, tr.To)
	}
	require.Equal(t, allowedMoves, seen)
}

func TestSources(t *testing.T) {
	t.Parallel()

	tests := []struct {
		to   domain.Status
		by   domain.Actor
		want []domain.Status
	}{
		{domain.StatusTBDL, domain.ByOperator, []domain.Status{domain.StatusPEND, domain.StatusWAIT, domain.StatusNDLV}},
		{domain.StatusFAIL, domain.ByOperator, []domain.Status{domain.StatusWAIT, domain.StatusHOLD, domain.StatusNDLV}},
		{domain.StatusTBDL, domain.ByEngine, []domain.Status{domain.StatusPEND, domain.StatusDLNG, domain.StatusHOLD}},
		{domain.StatusDLNG, domain.ByEngine, []domain.Status{domain.StatusTBDL, domain.StatusWAIT}},
		{domain.StatusNDLV, domain.ByEngine, []domain.Status{domain.StatusDLNG}},
		{domain.StatusHOLD, domain.ByEngine, []domain.Status{domain.StatusTBDL}},
		{domain.StatusDLVD, domain.ByOperator, nil},
		{domain.StatusPEND, domain.ByEngine, nil},
		{domain.StatusFAIL, domain.ByEngine, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.by, tt.to), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.Sources(tt.to, tt.by))
		})
	}
}

// Sources must agree with Allowed for every target, in the order of Statuses.
func TestSourcesMatchesAllowed(t *testing.T) {
	t.Parallel()

	for _, by := range []domain.Actor{domain.ByEngine, domain.ByOperator} {
		for _, to := range domain.Statuses {
			var want []domain.Status
			for _, from := range domain.Statuses {
				if allowedMoves[move{from, to, by}] {
					want = append(want, from)
				}
			}
			require.Equal(t, want, domain.Sources(to, by), "%s to %s", by, to)
		}
	}
}

func TestActorString(t *testing.T) {
	t.Parallel()

	require.Equal(t, "engine", domain.ByEngine.String())
	require.Equal(t, "operator", domain.ByOperator.String())
	require.Equal(t, "actor(0)", domain.Actor(0).String())
}
