package domain_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestAuditEntryBound(t *testing.T) {
	t.Parallel()

	small := domain.AuditEntry{Actor: "ops", Source: "10.0.0.1", Action: "message.resend",
		Targets: []string{"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"}, Result: domain.AuditOK, Detail: "reason: duplicate"}
	e := small
	e.Bound()
	require.Equal(t, small, e, "an entry within the bounds is kept as it is")

	targets := make([]string, 2500)
	for i := range targets {
		targets[i] = fmt.Sprintf("t%d", i)
	}
	targets[1] = strings.Repeat("q", 100_000)
	e = domain.AuditEntry{
		Actor: "anonymous", Source: "192.0.2.1",
		Action:  "POST /v1/actions/" + strings.Repeat("x", 900_000),
		Targets: targets, Result: domain.AuditDenied,
		Detail: strings.Repeat("ü", 5000),
	}
	e.Bound()
	require.LessOrEqual(t, len(e.Action), domain.MaxAuditName)
	require.Contains(t, e.Action, "… (")
	require.Len(t, e.Targets, domain.MaxAuditTargets)
	require.LessOrEqual(t, len(e.Targets[1]), domain.MaxAuditTarget)
	require.Equal(t, strings.Repeat("q", 100_000), targets[1], "the caller's targets are not changed")
	require.LessOrEqual(t, len(e.Detail), domain.MaxAuditDetail)
	require.True(t, utf8.ValidString(e.Detail), "cut at a character boundary")

	require.True(t, strings.HasSuffix(e.Detail, "more bytes); targets: 1000 of 2500 recorded"), "the count of what was left out is kept")

	e = domain.AuditEntry{Action: "message.fail", Targets: targets, Detail: "reason: cleanup"}
	e.Bound()
	require.Equal(t, "reason: cleanup; targets: 1000 of 2500 recorded", e.Detail)
}
