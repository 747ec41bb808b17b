package termprobe

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRestore: Restore unsets CI only if init set it. (Whether init ran
// before Bubble Tea's is checked on a real terminal by cmd/queuectl's
// TestNoTerminalQueryOnACommand.)
func TestRestore(t *testing.T) {
	before, had := os.LookupEnv(ci)
	setByInit := set
	Restore()
	after, has := os.LookupEnv(ci)
	if setByInit {
		require.Equal(t, "1", before)
		require.False(t, has, "Restore unsets the CI that init set")
		return
	}
	require.Equal(t, had, has, "Restore leaves a CI it did not set")
	require.Equal(t, before, after)
	Restore()
	_, has = os.LookupEnv(ci)
	require.Equal(t, had, has)
}
