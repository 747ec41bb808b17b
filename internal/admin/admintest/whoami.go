package admintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
)

// testWhoAmI: the services under test act for the owner of the store (in
// embedded mode, or on a server's socket), who is admin and may run every
// command, send included; asking writes nothing to the audit log.
func testWhoAmI(t *testing.T, b *bundle) {
	id, err := b.svc.WhoAmI(b.ctx)
	require.NoError(t, err)
	require.NotEmpty(t, id.Name)
	require.Equal(t, admin.RoleAdmin, id.Role)
	for _, cmd := range []string{"queue list", "message payload", "message resend", "tune set", "eoio switch", "send"} {
		require.True(t, id.May(cmd), cmd)
	}
	require.False(t, id.May("serve"), "a command that does not talk to a server is not listed")
	require.IsIncreasing(t, id.Commands)
	require.Empty(t, b.auditLog(t, admin.AuditFilter{}))
}
