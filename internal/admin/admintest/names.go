package admintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// testNames: what shell completion offers comes from the service, so that
// it names the queues and receivers of the store or server in use.
func testNames(t *testing.T, b *bundle) {
	names := func(p admin.NamesParams) []string {
		t.Helper()
		out, err := b.svc.Names(b.ctx, p)
		require.NoError(t, err)
		return out
	}
	b.send(t, eo("x"), eoio("ORDERS_DE", "y"), eoio("ORDERS_AT", "z"), eoio("RETURNS", "w"))

	require.Equal(t, []string{"XBQIORDERS_AT", "XBQIORDERS_DE", "XBQIRETURNS", "XBTI0000"}, names(admin.NamesParams{Kind: admin.NameQueue}))
	require.Equal(t, []string{"XBQIORDERS_AT", "XBQIORDERS_DE"}, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQIO"}))
	require.Equal(t, []string{"XBQIORDERS_AT"}, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQ", Limit: 1}))
	require.Empty(t, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQO"}))
	require.Empty(t, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQIP"}), "the names just before are passed over")
	require.Equal(t, []string{"XBQIRETURNS"}, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQIR"}))
	require.Equal(t, []string{"XBQIRETURNS", "XBTI0000"}, names(admin.NamesParams{Kind: admin.NameQueue, After: "XBQIORDERS_DE"}),
		"the next page starts after the last name of the one before")
	require.Equal(t, []string{"XBQIORDERS_DE"}, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQIO", After: "XBQIORDERS_AT"}))
	require.Equal(t, []string{"XBQIORDERS_AT", "XBQIORDERS_DE"}, names(admin.NamesParams{Kind: admin.NameQueue, Prefix: "XBQIO", After: "XBQ"}),
		"an after before the prefix's names passes none of them")
	require.Empty(t, names(admin.NamesParams{Kind: admin.NameQueue, After: "XBTI0000"}))
	require.Equal(t, []string{"FAIL", "HOLD"}, names(admin.NamesParams{Kind: admin.NameStatus, After: "DLVD", Limit: 2}))

	require.Equal(t, []string{"ARCHIVE", "WMS"}, names(admin.NamesParams{Kind: admin.NameReceiver}), "the configured receivers")
	require.Equal(t, []string{"NDLV"}, names(admin.NamesParams{Kind: admin.NameStatus, Prefix: "N"}))
	require.Len(t, names(admin.NamesParams{Kind: admin.NameStatus}), len(domain.Statuses))
	require.Equal(t, []string{"EMPTY", "ERROR"}, names(admin.NamesParams{Kind: admin.NameState, Prefix: "E"}))
	require.Equal(t, []string{"EO_INBOUND_PARALLEL", "EO_OUTBOUND_PARALLEL"}, names(admin.NamesParams{Kind: admin.NameParam}))
	require.Equal(t, []string{"CENTRAL", "RECEIVER", "SENDER"}, names(admin.NamesParams{Kind: admin.NameSub, Param: eoInbound}))
	require.Equal(t, []string{"WMS"}, names(admin.NamesParams{Kind: admin.NameSub, Param: eoOutbound, Prefix: "W"}))
	require.Empty(t, names(admin.NamesParams{Kind: admin.NameSub, Param: "NOPE"}))

	_, err := b.svc.Names(b.ctx, admin.NamesParams{Kind: "color"})
	require.ErrorIs(t, err, domain.ErrInvalid)
}
