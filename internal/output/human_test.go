package output_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/output"
)

func TestAge(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time {
		at := now.Add(-d)
		return &at
	}
	tests := []struct {
		at   *time.Time
		want string
	}{
		{nil, "-"},
		{&time.Time{}, "-"},
		{ago(-5 * time.Second), "0s"}, // clock skew: a time in the future
		{ago(0), "0s"},
		{ago(45 * time.Second), "45s"},
		{ago(59*time.Second + 999*time.Millisecond), "59s"},
		{ago(time.Minute), "1m"},
		{ago(12*time.Minute + 30*time.Second), "12m"},
		{ago(time.Hour), "1h"},
		{ago(47*time.Hour + 59*time.Minute), "47h"},
		{ago(48 * time.Hour), "2d"},
		{ago(3*24*time.Hour + 23*time.Hour), "3d"},
		{ago(400 * 24 * time.Hour), "400d"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, output.Age(tt.at, now), "%v", tt.at)
	}
}

func TestTime(t *testing.T) {
	t.Parallel()

	require.Equal(t, "-", output.Time(nil))
	require.Equal(t, "-", output.Time(&time.Time{}))

	cet := time.FixedZone("CET", 3600)
	at := time.Date(2026, 3, 10, 13, 4, 5, 999, cet)
	require.Equal(t, "2026-03-10T12:04:05Z", output.Time(&at), "RFC 3339 in UTC, whole seconds")
}

func TestDash(t *testing.T) {
	t.Parallel()

	require.Equal(t, "-", output.Dash(""))
	require.Equal(t, "WMS", output.Dash("WMS"))
	require.Equal(t, " ", output.Dash(" "))
}

func TestTruncate(t *testing.T) {
	t.Parallel()

	require.Equal(t, "timeout", output.Truncate("timeout", 7))
	require.Equal(t, "timeout", output.Truncate("timeout", 40))
	require.Equal(t, "time…", output.Truncate("timeout", 5))
	require.Equal(t, "…", output.Truncate("timeout", 1))
	require.Equal(t, "", output.Truncate("timeout", 0))
	require.Equal(t, "", output.Truncate("", 0))
	require.Equal(t, "Zürich→Ba…", output.Truncate("Zürich→Basel", 10), "counts characters, not bytes")
}
