package bolt

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// The bytes statuses are stored as are the file format: they must never
// change, whatever order domain lists the statuses in.
func TestStoredStatusCodesArePinned(t *testing.T) {
	t.Parallel()
	pinned := map[domain.Status]byte{
		domain.StatusPEND: 0, domain.StatusTBDL: 1, domain.StatusDLNG: 2, domain.StatusWAIT: 3,
		domain.StatusHOLD: 4, domain.StatusNDLV: 5, domain.StatusDLVD: 6, domain.StatusFAIL: 7,
	}
	for _, s := range domain.Statuses {
		c, err := statusCode(s)
		require.NoError(t, err)
		require.Equal(t, pinned[s], c, "status %s", s)
		back, err := statusOf(c)
		require.NoError(t, err)
		require.Equal(t, s, back)
	}
	require.Len(t, storedStatuses, len(domain.Statuses), "every status has a stored code")
}

// A record that says its payload is its parent's but names no parent is
// refused, not trusted.
func TestSharedPayloadWithoutParentIsRefused(t *testing.T) {
	t.Parallel()
	m := &domain.Message{ID: domain.NewID(), QoS: domain.EO, Stage: domain.Outbound, Status: domain.StatusTBDL, Queue: "XBTO2107"}
	key, err := parseID(m.ID)
	require.NoError(t, err)
	v, err := encodeMessage(key, m, form{shared: true})
	require.NoError(t, err)
	_, err = decodeMessage(key[:], v, false)
	require.ErrorContains(t, err, "names no parent")
}
