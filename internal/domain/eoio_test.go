package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestEOIOSlot(t *testing.T) {
	t.Parallel()

	// Fixed values, checked against Python's zlib.crc32 modulo n, so that
	// a change of hash — which would reorder app queues across restarts of
	// the same set — cannot go unnoticed.
	fixed := []struct {
		appQueue string
		n, want  int
	}{
		{"ORDERS_DE", 8, 2}, {"ORDERS_FR", 8, 7}, {"ORDERS_DE", 99, 27}, {"INVOICES", 99, 95}, {"A", 4, 3}, {"B", 1, 0},
	}
	for _, f := range fixed {
		require.Equal(t, f.want, domain.EOIOSlot(f.appQueue, f.n), "EOIOSlot(%q, %d)", f.appQueue, f.n)
	}
}

func TestEOIOSetNames(t *testing.T) {
	t.Parallel()

	perApp := domain.EOIOSet{Prefix: domain.PrefixXBQ}
	require.Equal(t, "XBQIORDERS_DE", perApp.Inbound(domain.RoleCentral, "ORDERS_DE"))
	require.Equal(t, "XBQO2107ORDERS_DE", perApp.Outbound(domain.Code4("WMS"), "ORDERS_DE"))
	require.False(t, perApp.Shared())

	shared := domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 8}
	require.Equal(t, "XB2IEOIO02", shared.Inbound(domain.RoleCentral, "ORDERS_DE"))
	require.Equal(t, "XB2SEOIO07", shared.Inbound(domain.RoleSender, "ORDERS_FR"))
	require.Equal(t, "XB2O2107EOIO02", shared.Outbound(domain.Code4("WMS"), "ORDERS_DE"))
	require.True(t, shared.Shared())
	require.Equal(t, "XB2, 8 queues per stage", shared.String())
	require.Equal(t, "XBQ, one queue per app queue", perApp.String())

	require.Equal(t, domain.PrefixXB2, domain.PrefixXBQ.Other())
	require.Equal(t, domain.PrefixXBQ, domain.PrefixXB2.Other())
}

func TestSharedQueueName(t *testing.T) {
	t.Parallel()

	for name, want := range map[string]bool{
		"XB2IEOIO07":        true,
		"XBQSEOIO00":        true,
		"XB2O2107EOIO98":    true,
		"XBQIORDERS_DE":     false,
		"XBQIEOIO7":         false, // one digit
		"XBQO2107ORDERS_DE": false,
		"XBQEEOIO07":        false, // an error queue
		"XBQF2107EOIO07":    false,
		"XBTIEOIO07":        false, // EO
		"XB2OXYZWEOIO07":    false, // no code4
	} {
		require.Equal(t, want, domain.SharedQueueName(name), name)
	}
}

func TestEOIOSwitchSets(t *testing.T) {
	t.Parallel()

	never := domain.DefaultEOIO
	require.False(t, never.Switched())
	set, ok := never.SetOf("XBQIORDERS")
	require.True(t, ok)
	require.Equal(t, domain.EOIOSet{Prefix: domain.PrefixXBQ}, set)
	_, ok = never.SetOf("XB2IEOIO01")
	require.False(t, ok, "no set has prefix XB2 before a switch")

	sw := domain.EOIOSwitch{Current: domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 4}, Old: domain.EOIOSet{Prefix: domain.PrefixXBQ}}
	require.True(t, sw.Switched())
	require.True(t, sw.SharedQueue("XB2IEOIO01"))
	require.True(t, sw.SharedQueue("XB2O2107EOIO03"))
	require.False(t, sw.SharedQueue("XBQIORDERS"), "the old set is one queue per app queue")
	require.False(t, sw.SharedQueue("XBQIEOIO01"), "named like a shared queue, but of the old set: app queue EOIO01's own")
	require.False(t, sw.SharedQueue("XBQEORDERS"), "an error queue")
	require.False(t, sw.SharedQueue("XBTI0000"), "EO")
	_, ok = sw.SetOf("XBQFORDERS")
	require.False(t, ok)
}

func TestLane(t *testing.T) {
	t.Parallel()

	in := domain.Lane{Stage: domain.Inbound, AppQueue: "ORDERS_DE"}
	out := domain.Lane{Stage: domain.Outbound, Receiver: "WMS", Code: domain.Code4("WMS"), AppQueue: "ORDERS_DE"}
	require.Equal(t, "XBQEORDERS_DE", in.ErrorQueue())
	require.Equal(t, "XBQF2107ORDERS_DE", out.ErrorQueue())
	require.Len(t, domain.ReservedQueuePrefix, 4)

	shared := domain.EOIOSet{Prefix: domain.PrefixXB2, Queues: 8}
	require.Equal(t, []string{"XB2SEOIO02", "XB2IEOIO02", "XB2REOIO02"}, in.Queues(shared))
	require.Equal(t, []string{"XB2O2107EOIO02"}, out.Queues(shared))

	m := &domain.Message{QoS: domain.EOIO, Stage: domain.Outbound, Receiver: "WMS", AppQueue: "ORDERS_DE", Sender: "ERP",
		Queue: "XBQO2107ORDERS_DE"}
	require.Equal(t, out, domain.LaneOf(m))
	m.Stage, m.Receiver, m.Queue = domain.Inbound, "", "XBQIORDERS_DE"
	require.Equal(t, in, domain.LaneOf(m))

	// The longest names fit §3's limit of 24 characters.
	long := domain.Lane{Stage: domain.Outbound, Receiver: "WMS", Code: domain.Code4("WMS"), AppQueue: "ABCDEFGHIJKLMNOP"}
	require.Len(t, long.ErrorQueue(), domain.MaxQueueName)
	for _, q := range []string{long.ErrorQueue(), in.ErrorQueue()} {
		qos, _, ok := domain.QueueQoS(q)
		require.True(t, ok)
		require.Equal(t, domain.EOIO, qos)
	}
}
