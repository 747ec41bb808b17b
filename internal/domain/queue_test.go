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

	got, err = domain.ParseQueueStates("ACTIVE,WAITING,BLOCKED,ERROR,STOPPED,UNCONFIGURED,EMPTY")
	require.NoError(t, err)
	require.Equal(t, domain.QueueStates, got)

	_, err = domain.ParseQueueStates("ACTIVE,busy")
	requireInvalid(t, err, `queue state "busy"`, "ACTIVE, WAITING, BLOCKED, ERROR, STOPPED, UNCONFIGURED, EMPTY")
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
	head := func(s domain.Status, c domain.ErrorClass) *domain.QueueHead {
		return &domain.QueueHead{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", Status: s, ErrorClass: c, Since: since}
	}
	tests := []struct {
		name    string
		stopped bool
		depth   int64
		head    *domain.QueueHead
		qos     domain.QoS
		want    domain.QueueState
	}{
		{"stopped beats everything", true, 5, head(domain.StatusNDLV, domain.ErrorPermanent), domain.EOIO, domain.QueueStopped},
		{"stopped and empty", true, 0, nil, domain.EO, domain.QueueStopped},
		{"empty", false, 0, nil, domain.EO, domain.QueueEmpty},
		{"depth zero with a stale head", false, 0, head(domain.StatusTBDL, ""), domain.EO, domain.QueueEmpty},
		{"open messages, none holds the queue up", false, 3, nil, domain.EO, domain.QueueError},
		{"a passed-over head is no head", false, 3, head(domain.StatusNDLV, domain.ErrorPermanent), domain.EO, domain.QueueError},
		{"TBDL head", false, 3, head(domain.StatusTBDL, ""), domain.EO, domain.QueueActive},
		{"DLNG head", false, 3, head(domain.StatusDLNG, ""), domain.EOIO, domain.QueueActive},
		{"WAIT head", false, 3, head(domain.StatusWAIT, domain.ErrorTransient), domain.EOIO, domain.QueueWaiting},
		{"NDLV EOIO", false, 3, head(domain.StatusNDLV, domain.ErrorPermanent), domain.EOIO, domain.QueueBlocked},
		{"NDLV EOIO blacklisted", false, 3, head(domain.StatusNDLV, domain.ErrorCrash), domain.EOIO, domain.QueueBlocked},
		{"NDLV EO exhausted", false, 3, head(domain.StatusNDLV, domain.ErrorTransient), domain.EO, domain.QueueBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.StateOf(tt.stopped, tt.depth, tt.head, tt.qos, false))
		})
	}
}

// TestStateOfUnconfigured: a queue whose receiver no node has configured
// is UNCONFIGURED where it would deliver now on its own; what needs an
// operator, waits for a retry, or has nothing to deliver keeps its state.
func TestStateOfUnconfigured(t *testing.T) {
	t.Parallel()

	head := func(s domain.Status, c domain.ErrorClass) *domain.QueueHead {
		return &domain.QueueHead{Status: s, ErrorClass: c}
	}
	tests := []struct {
		name    string
		stopped bool
		depth   int64
		head    *domain.QueueHead
		qos     domain.QoS
		want    domain.QueueState
	}{
		{"TBDL head", false, 3, head(domain.StatusTBDL, ""), domain.EO, domain.QueueUnconfigured},
		{"WAIT head", false, 3, head(domain.StatusWAIT, domain.ErrorTransient), domain.EOIO, domain.QueueWaiting},
		{"DLNG head", false, 1, head(domain.StatusDLNG, ""), domain.EO, domain.QueueUnconfigured},
		{"stopped", true, 3, head(domain.StatusTBDL, ""), domain.EO, domain.QueueStopped},
		{"empty", false, 0, nil, domain.EO, domain.QueueEmpty},
		{"blocked", false, 3, head(domain.StatusNDLV, domain.ErrorPermanent), domain.EOIO, domain.QueueBlocked},
		{"error", false, 3, nil, domain.EO, domain.QueueError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.StateOf(tt.stopped, tt.depth, tt.head, tt.qos, true))
		})
	}
}

func TestBehind(t *testing.T) {
	t.Parallel()

	head := func(s domain.Status, c domain.ErrorClass) *domain.QueueHead {
		return &domain.QueueHead{Status: s, ErrorClass: c}
	}
	// EOIO, blocked head, 3 HOLD behind it.
	require.Equal(t, int64(3), domain.Behind(4, 0, head(domain.StatusNDLV, domain.ErrorPermanent), domain.EOIO))
	// EO, exhausted head, 2 TBDL behind it and 5 passed over that hold nothing up.
	require.Equal(t, int64(2), domain.Behind(8, 5, head(domain.StatusNDLV, domain.ErrorTransient), domain.EO))
	// A WAIT head holds its queue up too.
	require.Equal(t, int64(2), domain.Behind(3, 0, head(domain.StatusWAIT, domain.ErrorTransient), domain.EO))
	// Nothing is held up behind a head that delivers, or with no head.
	require.Zero(t, domain.Behind(10, 0, head(domain.StatusTBDL, ""), domain.EOIO))
	require.Zero(t, domain.Behind(100, 100, nil, domain.EO))
}

func TestHeadOfShowsOnlyACurrentError(t *testing.T) {
	t.Parallel()

	m := &domain.Message{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", Status: domain.StatusNDLV,
		Error: "blacklisted: the engine process died 2 times", ErrorClass: domain.ErrorCrash, Blacklisted: true}
	h := domain.HeadOf(m)
	require.Equal(t, m.Error, h.Error)
	require.Equal(t, domain.ErrorCrash, h.ErrorClass)

	// Released: TBDL again, its record keeps the last error, the queue does not show it.
	m.Status, m.Blacklisted = domain.StatusTBDL, false
	h = domain.HeadOf(m)
	require.Empty(t, h.Error)
	require.Empty(t, h.ErrorClass)
}
