package domain_test

import (
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// code4 is §3's formula, restated here so that the test does not trust the code under test.
func code4(r string) string {
	return fmt.Sprintf("%04X", crc32.ChecksumIEEE([]byte(r))>>16)
}

func TestCode4(t *testing.T) {
	t.Parallel()

	// Fixed values, checked against an independent CRC-32 (IEEE) implementation
	// (Python's zlib.crc32), so a change of formula cannot go unnoticed.
	fixed := map[string]string{
		"WMS":     "2107",
		"ARCHIVE": "EAB9",
		"R15":     "0097", // leading zeros are kept
		"":        "0000",
	}
	for r, want := range fixed {
		require.Equal(t, want, domain.Code4(r), "Code4(%q)", r)
	}

	for _, r := range []string{"a", "DROPBOX", "NULL", "BANK_01", "erp.eu-west", strings.Repeat("Z", domain.MaxPartyName)} {
		got := domain.Code4(r)
		require.Equal(t, code4(r), got, "Code4(%q)", r)
		require.Regexp(t, `^[0-9A-F]{4}$`, got)
	}
}

func TestEOInboundQueue(t *testing.T) {
	t.Parallel()

	tests := []struct {
		role domain.Role
		slot int
		want string
	}{
		{domain.RoleSender, 0, "XBTS0000"},
		{domain.RoleCentral, 7, "XBTI0007"},
		{domain.RoleReceiver, 42, "XBTR0042"},
		{domain.RoleCentral, 9998, "XBTI9998"}, // highest slot for EO_INBOUND_PARALLEL=9999
		{domain.Role(""), 1, "XBTI0001"},       // an unset role is central, the default
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, domain.EOInboundQueue(tt.role, tt.slot))
		})
	}
}

func TestEOOutboundQueue(t *testing.T) {
	t.Parallel()

	c := code4("WMS")
	require.Equal(t, "XBTO2107", domain.EOOutboundQueue(domain.Code4("WMS"), 1, 0))
	require.Equal(t, "XBTO"+c, domain.EOOutboundQueue(domain.Code4("WMS"), 0, 0), "parallel 0 means unset: no slot")
	require.Equal(t, "XBTO"+c, domain.EOOutboundQueue(domain.Code4("WMS"), 1, 5), "no slot unless parallel > 1")
	require.Equal(t, "XBTO21070003", domain.EOOutboundQueue(domain.Code4("WMS"), 4, 3))
	require.Equal(t, "XBTO"+c+"0000", domain.EOOutboundQueue(domain.Code4("WMS"), 2, 0))
	require.Equal(t, "XBTO"+c+"9998", domain.EOOutboundQueue(domain.Code4("WMS"), 9999, 9998))
	require.Equal(t, "XBTO"+code4("ARCHIVE")+"0001", domain.EOOutboundQueue(domain.Code4("ARCHIVE"), 3, 1))
}

func TestEOIOInboundQueue(t *testing.T) {
	t.Parallel()

	require.Equal(t, "XBQIORDERS_DE", domain.EOIOInboundQueue(domain.PrefixXBQ, domain.RoleCentral, "ORDERS_DE"))
	require.Equal(t, "XBQSORDERS_DE", domain.EOIOInboundQueue(domain.PrefixXBQ, domain.RoleSender, "ORDERS_DE"))
	require.Equal(t, "XBQRA/B", domain.EOIOInboundQueue(domain.PrefixXBQ, domain.RoleReceiver, "A/B"))
	require.Equal(t, "XB2IORDERS_DE", domain.EOIOInboundQueue(domain.PrefixXB2, domain.RoleCentral, "ORDERS_DE"))
}

func TestEOIOOutboundQueue(t *testing.T) {
	t.Parallel()

	require.Equal(t, "XBQO2107ORDERS_DE", domain.EOIOOutboundQueue(domain.PrefixXBQ, domain.Code4("WMS"), "ORDERS_DE"))
	require.Equal(t, "XBQO"+code4("ARCHIVE")+"ORDERS_DE", domain.EOIOOutboundQueue(domain.PrefixXBQ, domain.Code4("ARCHIVE"), "ORDERS_DE"))
	require.Equal(t, "XB2O"+code4("ARCHIVE")+"ORDERS_DE", domain.EOIOOutboundQueue(domain.PrefixXB2, domain.Code4("ARCHIVE"), "ORDERS_DE"))
}

// The longest name of each kind, built from the largest inputs §2 and §7 allow,
// must fit in MaxQueueName.
func TestQueueNamesFitMaxQueueName(t *testing.T) {
	t.Parallel()

	require.Equal(t, 24, domain.MaxQueueName)
	longApp := strings.Repeat("W", domain.MaxAppQueue)
	longParty := strings.Repeat("p", domain.MaxPartyName)
	names := []string{
		domain.EOInboundQueue(domain.RoleReceiver, 9998),
		domain.EOOutboundQueue(domain.Code4(longParty), 9999, 9998),
		domain.EOIOInboundQueue(domain.PrefixXB2, domain.RoleSender, longApp),
		domain.EOIOOutboundQueue(domain.PrefixXB2, domain.Code4(longParty), longApp),
		domain.EOIOOutboundQueue(domain.PrefixXBQ, domain.Code4(longParty), longApp),
	}
	for _, n := range names {
		require.LessOrEqual(t, len(n), domain.MaxQueueName, "%q", n)
	}
	require.Len(t, names[3], domain.MaxQueueName, "EOIO outbound with a 16-char app queue is exactly the limit")
}

// Every name the constructors build tells its own qos and stage back.
func TestQueueQoSRoundTrip(t *testing.T) {
	t.Parallel()

	type want struct {
		qos   domain.QoS
		stage domain.Stage
	}
	names := map[string]want{}
	for _, role := range []domain.Role{domain.RoleSender, domain.RoleCentral, domain.RoleReceiver} {
		names[domain.EOInboundQueue(role, 7)] = want{domain.EO, domain.Inbound}
		for _, p := range []domain.Prefix{domain.PrefixXBQ, domain.PrefixXB2} {
			names[domain.EOIOInboundQueue(p, role, "ORDERS_DE")] = want{domain.EOIO, domain.Inbound}
			// An app queue that starts with O must not make an inbound queue outbound.
			names[domain.EOIOInboundQueue(p, role, "OUT")] = want{domain.EOIO, domain.Inbound}
		}
	}
	for _, r := range []string{"WMS", "ARCHIVE", "R15"} {
		names[domain.EOOutboundQueue(domain.Code4(r), 1, 0)] = want{domain.EO, domain.Outbound}
		names[domain.EOOutboundQueue(domain.Code4(r), 8, 3)] = want{domain.EO, domain.Outbound}
		for _, p := range []domain.Prefix{domain.PrefixXBQ, domain.PrefixXB2} {
			names[domain.EOIOOutboundQueue(p, domain.Code4(r), "ORDERS_DE")] = want{domain.EOIO, domain.Outbound}
		}
	}
	// §10: the switched sets and the error queues.
	names["XB2IEOIO07"] = want{domain.EOIO, domain.Inbound}
	names["XB2O"+code4("WMS")+"EOIO07"] = want{domain.EOIO, domain.Outbound}
	names["XBQEORDERS_DE"] = want{domain.EOIO, domain.Inbound}
	names["XBQF"+code4("WMS")+"ORDERS_DE"] = want{domain.EOIO, domain.Outbound}

	for name, w := range names {
		qos, stage, ok := domain.QueueQoS(name)
		require.True(t, ok, "%q", name)
		require.Equal(t, w.qos, qos, "%q", name)
		require.Equal(t, w.stage, stage, "%q", name)
	}
}

func TestQueueQoSRefusesOtherNames(t *testing.T) {
	t.Parallel()

	for _, name := range []string{"", "XBT", "XBQ", "xbti0007", "ABCD", "XBXI0001", "XBTX0001", "XBTE0001", "XBQZORDERS", "QUEUE"} {
		_, _, ok := domain.QueueQoS(name)
		require.False(t, ok, "%q", name)
	}
}

func TestParseRole(t *testing.T) {
	t.Parallel()

	tests := []struct {
		in      string
		want    domain.Role
		letter  string
		subparm string
	}{
		{"sender", domain.RoleSender, "S", "SENDER"},
		{"central", domain.RoleCentral, "I", "CENTRAL"},
		{"receiver", domain.RoleReceiver, "R", "RECEIVER"},
		{" Receiver ", domain.RoleReceiver, "R", "RECEIVER"},
		{"CENTRAL", domain.RoleCentral, "I", "CENTRAL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ParseRole(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.letter, got.Letter())
			require.Equal(t, tt.subparm, got.Subparameter())
		})
	}

	for _, in := range []string{"", "I", "hub", "senders"} {
		_, err := domain.ParseRole(in)
		require.ErrorIs(t, err, domain.ErrInvalid, "%q", in)
		require.ErrorContains(t, err, fmt.Sprintf("%q", in))
		require.ErrorContains(t, err, "sender, central or receiver")
	}
}
