package tx_test

import (
	"encoding/json"
	"strings"
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
	require.Contains(t, got, "last_check_at")
	require.Nil(t, got["last_check_at"], "...when it was last checked, null before the first check")
	require.Equal(t, "", got["last_answer"])
	require.Equal(t, false, got["stuck"], "...and stuck")

	at := time.Date(2026, 3, 10, 12, 0, 40, 0, time.UTC)
	checked := m.Clone()
	checked.Checks, checked.LastCheckAt, checked.LastAnswer, checked.Stuck = 10, &at, "timeout", true
	b, err = json.Marshal(tx.Entry{Message: checked})
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), `"checks":`), "one key each: %s", b)
	require.Contains(t, string(b), `"checks":10,"last_check_at":"2026-03-10T12:00:40Z","last_answer":"timeout","stuck":true`)

	y, err := yaml.Marshal(tx.Entry{Message: m})
	require.NoError(t, err)
	require.Contains(t, string(y), "\nstatus: PEND\n", "flat in YAML too")
	require.Contains(t, string(y), "\nchecks: 0\nlast_check_at: null\nlast_answer: \"\"\nstuck: false\n", "present at zero: %s", y)
	y, err = yaml.Marshal(tx.Entry{Message: checked})
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(y), "\nchecks:"), "one key each: %s", y)
	require.Contains(t, string(y), "\nchecks: 10\nlast_check_at: 2026-03-10T12:00:40Z\nlast_answer: timeout\nstuck: true\n")
}
