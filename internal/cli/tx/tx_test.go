package tx_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/cli/tx"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestEntryEncoding(t *testing.T) {
	t.Parallel()

	m := &domain.Message{
		ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", QoS: domain.EO, Sender: "ERP", Queue: "XBTI0000",
		Stage: domain.Inbound, Status: domain.StatusPEND, CreatedAt: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC),
	}
	b, err := json.Marshal(tx.Entry{Message: m})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", got["id"], "a tx entry is a message...")
	require.Equal(t, "PEND", got["status"])
	require.Equal(t, float64(0), got["checks"], "...plus checks")
	require.Equal(t, false, got["stuck"], "...and stuck")

	y, err := yaml.Marshal(tx.Entry{Message: m, Checks: 2})
	require.NoError(t, err)
	require.Contains(t, string(y), "\nstatus: PEND\n", "flat in YAML too")
	require.Contains(t, string(y), "\nchecks: 2\n")
}
