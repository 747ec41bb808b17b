package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestParseQueueStates(t *testing.T) {
	t.Parallel()

	got, err := domain.ParseQueueStates("blocked, Waiting,STOPPED")
	require.NoError(t, err)
	require.Equal(t, []domain.QueueState{domain.QueueBlocked, domain.QueueWaiting, domain.QueueStopped}, got)

	got, err = domain.ParseQueueStates("")
	require.NoError(t, err)
	require.Empty(t, got)

	got, err = domain.ParseQueueStates("ACTIVE,WAITING,BLOCKED,STOPPED,EMPTY")
	require.NoError(t, err)
	require.Equal(t, domain.QueueStates, got)

	_, err = domain.ParseQueueStates("ACTIVE,busy")
	requireInvalid(t, err, `queue state "busy"`, "ACTIVE, WAITING, BLOCKED, STOPPED, EMPTY")
}

func TestBlocks(t *testing.T) {
	t.Parallel()

	classes := []domain.ErrorClass{"", domain.ErrorTransient, domain.ErrorPermanent, domain.ErrorCrash, domain.ErrorAdmin}
	for _, qos := range []domain.QoS{domain.EO, domain.EOIO} {
		for _, s := range domain.Statuses {
			for _, c := range classes {
				// §4: only an NDLV head blocks, and on an EO queue a
				// permanent error or blacklisting lets later messages go on.
				passed := qos == domain.EO && s == domain.StatusNDLV && (c == domain.ErrorPermanent || c == domain.ErrorCrash)
				require.Equal(t, passed, domain.PassedOver(qos, s, c), "%s %s %s", qos, s, c)
				want := s == domain.StatusNDLV && !passed
				require.Equal(t, want, domain.Blocks(qos, s, c), "%s %s %s", qos, s, c)
			}
		}
	}
	// Spelled out, the cases the table of §4 names:
	require.True(t, domain.Blocks(domain.EO, domain.StatusNDLV, domain.ErrorTransient), "EO, retries exhausted")
	require.False(t, domain.Blocks(domain.EO, domain.StatusNDLV, domain.ErrorPermanent), "EO, permanent")
	require.True(t, domain.Blocks(domain.EOIO, domain.StatusNDLV, domain.ErrorPermanent), "EOIO, permanent")
	require.False(t, domain.Blocks(domain.EO, domain.StatusNDLV, domain.ErrorCrash), "blacklisted, EO: it leaves the queue")
	require.True(t, domain.Blocks(domain.EOIO, domain.StatusNDLV, domain.ErrorCrash), "blacklisted, EOIO")
	require.False(t, domain.Blocks(domain.EOIO, domain.StatusWAIT, domain.ErrorTransient), "WAIT waits, it does not block")
}

func TestDepth(t *testing.T) {
	t.Parallel()

	require.Zero(t, domain.Depth(nil))
	require.Zero(t, domain.Depth(map[domain.Status]int64{domain.StatusPEND: 3, domain.StatusDLVD: 100, domain.StatusFAIL: 2}))
	require.Equal(t, int64(1+2+3+4+5), domain.Depth(map[domain.Status]int64{
		domain.StatusPEND: 1000, // not yet visible
		domain.StatusTBDL: 1,
		domain.StatusDLNG: 2,
		domain.StatusWAIT: 3,
		domain.StatusHOLD: 4,
		domain.StatusNDLV: 5,
		domain.StatusDLVD: 1000, // final
		domain.StatusFAIL: 1000, // final
	}))
}

func TestStateOf(t *testing.T) {
	t.Parallel()

	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	head := func(s domain.Status) *domain.QueueHead {
		return &domain.QueueHead{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", Status: s, Since: since}
	}
	tests := []struct {
		name    string
		stopped bool
		depth   int64
		head    *domain.QueueHead
		qos     domain.QoS
		class   domain.ErrorClass
		want    domain.QueueState
	}{
		{"stopped beats everything", true, 5, head(domain.StatusNDLV), domain.EOIO, domain.ErrorPermanent, domain.QueueStopped},
		{"stopped and empty", true, 0, nil, domain.EO, "", domain.QueueStopped},
		{"empty", false, 0, nil, domain.EO, "", domain.QueueEmpty},
		{"no head", false, 3, nil, domain.EO, "", domain.QueueEmpty},
		{"depth zero with a stale head", false, 0, head(domain.StatusTBDL), domain.EO, "", domain.QueueEmpty},
		{"TBDL head", false, 3, head(domain.StatusTBDL), domain.EO, "", domain.QueueActive},
		{"DLNG head", false, 3, head(domain.StatusDLNG), domain.EOIO, "", domain.QueueActive},
		{"WAIT head", false, 3, head(domain.StatusWAIT), domain.EOIO, domain.ErrorTransient, domain.QueueWaiting},
		{"NDLV EOIO", false, 3, head(domain.StatusNDLV), domain.EOIO, domain.ErrorPermanent, domain.QueueBlocked},
		{"NDLV EO exhausted", false, 3, head(domain.StatusNDLV), domain.EO, domain.ErrorTransient, domain.QueueBlocked},
		{"NDLV EO blacklisted goes on", false, 3, head(domain.StatusNDLV), domain.EO, domain.ErrorCrash, domain.QueueActive},
		{"NDLV EO permanent goes on", false, 3, head(domain.StatusNDLV), domain.EO, domain.ErrorPermanent, domain.QueueActive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.StateOf(tt.stopped, tt.depth, tt.head, tt.qos, tt.class))
		})
	}
}
