package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

func TestNewID(t *testing.T) {
	t.Parallel()

	a, b := domain.NewID(), domain.NewID()
	require.NoError(t, domain.ValidID(a))
	require.NotEqual(t, a, b)
	require.Equal(t, byte('7'), a[14], "a UUIDv7")
	require.Less(t, a, b, "ids are time-ordered, so a later id sorts after an earlier one")
}

func TestValidID(t *testing.T) {
	t.Parallel()

	for _, id := range []string{
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f",
		"0193A5C4-7B1E-7C3D-9F5E-2A4B6C8D0E1F",
	} {
		require.NoError(t, domain.ValidID(id), "%q", id)
	}
	for _, id := range []string{
		"",
		"0193a5c4",
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1",   // one short
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1ff", // one long
		"0193a5c47b1e7c3d9f5e2a4b6c8d0e1f",      // uuid.Parse accepts it, but it is not the id form
		"{0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f}",
		"urn:uuid:0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f",
		"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1g",
		"XBTI0007",
	} {
		requireInvalid(t, domain.ValidID(id), quote(id), "is not a UUID")
	}
}

func TestMessageClone(t *testing.T) {
	t.Parallel()

	next := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	orig := &domain.Message{
		ID:            "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f",
		QoS:           domain.EOIO,
		Sender:        "ERP",
		Receivers:     []string{"WMS", "ARCHIVE"},
		AppQueue:      "ORDERS_DE",
		Status:        domain.StatusWAIT,
		Headers:       map[string]string{"X-Env": "prod"},
		NextAttemptAt: &next,
		History: []domain.HistoryEntry{
			{At: next, From: domain.StatusDLNG, To: domain.StatusWAIT, Actor: "engine", Reason: "HTTP 503"},
		},
	}
	c := orig.Clone()
	require.Equal(t, orig, c)
	require.NotSame(t, orig, c)

	c.Receivers[0] = "CHANGED"
	c.Headers["X-Env"] = "CHANGED"
	c.Headers["X-New"] = "CHANGED"
	*c.NextAttemptAt = next.Add(time.Hour)
	c.History[0].Reason = "CHANGED"
	c.Status = domain.StatusTBDL

	require.Equal(t, []string{"WMS", "ARCHIVE"}, orig.Receivers)
	require.Equal(t, map[string]string{"X-Env": "prod"}, orig.Headers)
	require.Equal(t, next, *orig.NextAttemptAt)
	require.Equal(t, "HTTP 503", orig.History[0].Reason)
	require.Equal(t, domain.StatusWAIT, orig.Status)

	// Changes to the original do not reach the copy either.
	d := orig.Clone()
	orig.Receivers = append(orig.Receivers[:1], "OTHER")
	orig.Headers["X-Env"] = "dev"
	require.Equal(t, []string{"WMS", "ARCHIVE"}, d.Receivers)
	require.Equal(t, "prod", d.Headers["X-Env"])
}

// Nil stays nil and empty stays empty, so a copy is equal to its original.
func TestMessageCloneKeepsNilAndEmpty(t *testing.T) {
	t.Parallel()

	zero := &domain.Message{}
	require.Equal(t, zero, zero.Clone())
	require.Nil(t, zero.Clone().Headers)
	require.Nil(t, zero.Clone().NextAttemptAt)

	empty := &domain.Message{Receivers: []string{}, Headers: map[string]string{}, History: []domain.HistoryEntry{}}
	c := empty.Clone()
	require.Equal(t, empty, c)
	require.NotNil(t, c.Receivers)
	require.NotNil(t, c.Headers)
	require.NotNil(t, c.History)

	c.Headers["k"] = strings.Repeat("v", 3)
	require.Empty(t, empty.Headers)
}
