package domain

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseWholeNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"0": 0, "1": 1, "42": 42, "9999": 9999, "123456789": 123456789} {
		n, ok := ParseWholeNumber(s)
		require.True(t, ok, s)
		require.Equal(t, want, n, s)
	}
	for _, s := range []string{"", " 2", "2 ", "+3", "-3", "03", "00", "2.0", "1e3", "0x10", "１", "1_000", "1234567890"} {
		_, ok := ParseWholeNumber(s)
		require.False(t, ok, "%q", s)
	}
}
