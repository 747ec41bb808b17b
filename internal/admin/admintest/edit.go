package admintest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func testEditPayload(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	before, err := b.svc.Message(b.ctx, f.ndlv.ID)
	require.NoError(t, err)
	require.Equal(t, 1, before.PayloadVersion, "a message is sent at version 1")

	res, err := b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.ndlv.ID, Payload: []byte("fixed!"), Version: 1, Reason: "article code"})
	require.NoError(t, err)
	require.Equal(t, &admin.EditResult{ID: f.ndlv.ID, Status: domain.StatusNDLV,
		Previous: admin.VersionOf(1, []byte("ndlv")), Current: admin.VersionOf(2, []byte("fixed!"))}, res)

	after, err := b.svc.Message(b.ctx, f.ndlv.ID)
	require.NoError(t, err)
	require.Equal(t, 2, after.PayloadVersion)
	require.Equal(t, int64(6), after.Size)
	require.Equal(t, before.Queue, after.Queue, "the message stays in its queue")
	require.Equal(t, before.Seq, after.Seq, "and in its place")
	require.Equal(t, domain.StatusNDLV, after.Status)
	last := after.History[len(after.History)-1]
	require.Equal(t, domain.StatusNDLV, last.From)
	require.Equal(t, domain.StatusNDLV, last.To)
	require.Contains(t, last.Reason, "message.edit by "+last.Actor+": payload version 1 (4 bytes, sha256 "+res.Previous.SHA256+
		") → version 2 (6 bytes, sha256 "+res.Current.SHA256+"): article code")

	for n, want := range map[int]string{0: "fixed!", 1: "ndlv", 2: "fixed!"} {
		p, err := b.svc.PayloadVersion(b.ctx, f.ndlv.ID, n)
		require.NoError(t, err)
		require.Equal(t, want, string(p), "version %d", n)
	}
	_, err = b.svc.PayloadVersion(b.ctx, f.ndlv.ID, 3)
	require.ErrorIs(t, err, domain.ErrNotFound)

	entries := b.auditLog(t, admin.AuditFilter{Action: string(admin.ActEdit)})
	require.Len(t, entries, 1)
	require.Equal(t, []string{f.ndlv.ID}, entries[0].Targets)
	require.Equal(t, domain.AuditOK, entries[0].Result)
	require.Equal(t, last.Actor, entries[0].Actor)
	require.Contains(t, entries[0].Detail, res.Previous.SHA256)
	require.Contains(t, entries[0].Detail, res.Current.SHA256)
	require.Contains(t, entries[0].Detail, "reason: article code")

	// An edit that names the version it replaces fails once another came first.
	_, err = b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.ndlv.ID, Payload: []byte("late"), Version: 1})
	require.ErrorIs(t, err, admin.ErrVersionMismatch)
	require.ErrorIs(t, err, domain.ErrConflict)
	p, err := b.svc.Payload(b.ctx, f.ndlv.ID)
	require.NoError(t, err)
	require.Equal(t, "fixed!", string(p), "nothing changed")
	entries = b.auditLog(t, admin.AuditFilter{Action: string(admin.ActEdit), Result: domain.AuditConflict})
	require.Len(t, entries, 1, "the refusal is audited")
	require.Equal(t, []string{f.ndlv.ID}, entries[0].Targets)
}

func testEditPayloadResend(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	res, err := b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.wait.ID, Payload: []byte("retry me"), Resend: true})
	require.NoError(t, err)
	require.True(t, res.Resent)
	require.Equal(t, domain.StatusTBDL, res.Status)
	m, err := b.svc.Message(b.ctx, f.wait.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Attempts, "a resend starts the retries afresh")
	require.Equal(t, "message.resend by "+m.History[len(m.History)-1].Actor+" after message.edit", m.History[len(m.History)-1].Reason)

	// A blacklisted message resent after its edit is released, its
	// crashes reset, and its history and audit entry say so.
	res, err = b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.crashed.ID, Payload: []byte("not poison"), Resend: true})
	require.NoError(t, err)
	require.True(t, res.Released)
	m, err = b.svc.Message(b.ctx, f.crashed.ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, m.Status)
	require.Zero(t, m.Crashes)
	require.False(t, m.Blacklisted)
	require.Equal(t, "blacklist.release by "+m.History[len(m.History)-1].Actor+" after message.edit", m.History[len(m.History)-1].Reason)
	entries := b.auditLog(t, admin.AuditFilter{Action: string(admin.ActEdit), Result: domain.AuditOK})
	require.Contains(t, entries[0].Detail, "; resent, released from the blacklist (crashes reset)")

	// A message held behind a blocked head may be corrected, not resent.
	_, err = b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.hold.ID, Payload: []byte("held, fixed"), Resend: true})
	require.ErrorIs(t, err, domain.ErrConflict)
	require.Contains(t, err.Error(), "HOLD")
	require.Equal(t, domain.StatusHOLD, b.status(t, f.hold.ID))
	_, err = b.svc.EditPayload(b.ctx, admin.EditParams{ID: f.hold.ID, Payload: []byte("held, fixed")})
	require.NoError(t, err)
	require.Equal(t, domain.StatusHOLD, b.status(t, f.hold.ID))

	// Resending the corrected head of a blocked EOIO queue lets the queue go on.
	head := b.messages(t, admin.MessageFilter{Queues: []string{"XBQIBLOCKED"}})[0]
	_, err = b.svc.EditPayload(b.ctx, admin.EditParams{ID: head.ID, Payload: []byte("head, fixed"), Resend: true})
	require.NoError(t, err)
	require.Equal(t, domain.StatusTBDL, b.status(t, head.ID))
	require.Equal(t, domain.StatusTBDL, b.status(t, f.hold.ID), "the message behind it is held no more")
}

func testEditPayloadRefused(t *testing.T, b *bundle) {
	f := b.messageFixture(t)
	for name, c := range map[string]struct {
		p    admin.EditParams
		kind error
	}{
		"TBDL":          {admin.EditParams{ID: f.tbdl.ID, Payload: []byte("x")}, domain.ErrConflict},
		"DLVD":          {admin.EditParams{ID: f.dlvd.ID, Payload: []byte("x")}, domain.ErrConflict},
		"PEND":          {admin.EditParams{ID: f.pend.ID, Payload: []byte("x")}, domain.ErrConflict},
		"unknown":       {admin.EditParams{ID: unknownID, Payload: []byte("x")}, domain.ErrNotFound},
		"malformed id":  {admin.EditParams{ID: "not-an-id", Payload: []byte("x")}, domain.ErrInvalid},
		"too large":     {admin.EditParams{ID: f.ndlv.ID, Payload: bytes.Repeat([]byte("x"), MaxPayload+1)}, domain.ErrTooLarge},
		"unchanged":     {admin.EditParams{ID: f.ndlv.ID, Payload: []byte("ndlv")}, domain.ErrInvalid},
		"bad reason":    {admin.EditParams{ID: f.ndlv.ID, Payload: []byte("x"), Reason: "a\nb"}, domain.ErrInvalid},
		"stale version": {admin.EditParams{ID: f.ndlv.ID, Payload: []byte("x"), Version: 2}, admin.ErrVersionMismatch},
	} {
		_, err := b.svc.EditPayload(b.ctx, c.p)
		require.ErrorIs(t, err, c.kind, name)
	}
	for _, m := range []*domain.Message{f.tbdl, f.dlvd, f.ndlv} {
		got, err := b.svc.Message(b.ctx, m.ID)
		require.NoError(t, err)
		require.Equal(t, 1, got.PayloadVersion, "nothing changed")
		require.Equal(t, m.Status, got.Status)
	}
	entries := b.auditLog(t, admin.AuditFilter{Action: string(admin.ActEdit)})
	require.Len(t, entries, 9, "every refusal is audited")
	for _, e := range entries {
		require.NotEqual(t, domain.AuditOK, e.Result)
		require.Len(t, e.Targets, 1)
	}
}
