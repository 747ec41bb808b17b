package audit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestTargetsCell(t *testing.T) {
	t.Parallel()

	require.Equal(t, "-", targets(&domain.AuditEntry{}))
	require.Equal(t, "XBTI0000", targets(&domain.AuditEntry{Targets: []string{"XBTI0000"}}), "one target is shown")
	many := make([]string, 1000)
	require.Equal(t, "1,000 targets", targets(&domain.AuditEntry{Targets: many}), "many are counted")
}
