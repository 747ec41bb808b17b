package cmdutil_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestSplitList(t *testing.T) {
	t.Parallel()

	require.Nil(t, cmdutil.SplitList(nil))
	require.Nil(t, cmdutil.SplitList([]string{"", " , ,"}))
	require.Equal(t, []string{"TBDL", "WAIT", "NDLV"}, cmdutil.SplitList([]string{"TBDL,WAIT", "NDLV"}), "repeated flags and commas combine")
	require.Equal(t, []string{"TBDL", "WAIT"}, cmdutil.SplitList([]string{" TBDL , WAIT ,"}), "blanks are trimmed, empty items dropped")
	require.Equal(t, []string{"a", "a"}, cmdutil.SplitList([]string{"a,a"}), "duplicates are kept")
}

func TestParseAge(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Time{
		"":                          {},
		"90s":                       now.Add(-90 * time.Second),
		"15m":                       now.Add(-15 * time.Minute),
		"2h":                        now.Add(-2 * time.Hour),
		"2h30m":                     now.Add(-150 * time.Minute),
		"7d":                        now.Add(-7 * 24 * time.Hour),
		"1.5d":                      now.Add(-36 * time.Hour),
		"0s":                        now,
		"2026-03-01T08:00:00Z":      time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC),
		"2026-03-01T09:00:00+01:00": time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC),
	}
	for in, want := range tests {
		got, err := cmdutil.ParseAge("older-than", in, now)
		require.NoError(t, err, in)
		require.True(t, want.Equal(got), "%q: want %v, got %v", in, want, got)
		if !got.IsZero() {
			require.Equal(t, time.UTC, got.Location(), "%q comes back in UTC", in)
		}
	}

	for _, bad := range []string{"yesterday", "-5m", "7", "d", "1d12h", "2026-03-01", "10 m"} {
		_, err := cmdutil.ParseAge("newer-than", bad, now)
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
		require.ErrorContains(t, err, `--newer-than "`+bad+`"`, "names the flag and the value")
	}
}

func TestFlagError(t *testing.T) {
	t.Parallel()

	err := cmdutil.FlagError("--limit %d must be 0 (all) or more", -1)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.EqualError(t, err, "--limit -1 must be 0 (all) or more")
}
