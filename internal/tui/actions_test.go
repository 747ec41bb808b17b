package tui

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// TestResendDialogNamesTheBlacklisted: a resend over a selection names the
// blacklisted messages among it apart; one without any says nothing of it.
func TestResendDialogNamesTheBlacklisted(t *testing.T) {
	t.Parallel()
	plain := target{id: "01a2277f-a67a-7d13-b8e2-603639252bbb", queue: "XBTO2107", status: domain.StatusNDLV}
	poison := target{id: "01a2277f-b0c2-71e4-9d15-4f0e6c3b2a19", queue: "XBTO2107", status: domain.StatusNDLV, black: true}

	p := messageAction(verbResend, []target{plain, poison}, nil)
	require.Contains(t, strings.Join(p.dialog.Lines, "\n"),
		"1 of them is blacklisted (01a2277f…2a19): it crashed the engine. Resending releases it: crashes are reset to 0.")

	p = messageAction(verbResend, []target{plain}, nil)
	require.NotContains(t, strings.Join(p.dialog.Lines, "\n"), "blacklisted")
}
