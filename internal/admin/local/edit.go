package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// EditPayload stores a corrected payload as a new version, in one
// transaction with its history entry, its audit entry and, when asked, the
// resend. A refusal changes nothing and is audited.
func (s *Service) EditPayload(ctx context.Context, p admin.EditParams) (*admin.EditResult, error) {
	s = s.as(ctx)
	action := string(admin.ActEdit)
	id, err := messageID(p.ID)
	if err != nil {
		return nil, s.refused(ctx, action, []string{p.ID}, domain.AuditError, err)
	}
	targets := []string{id}
	if err := s.checkEdit(p); err != nil {
		return nil, s.refused(ctx, action, targets, domain.AuditError, err)
	}
	var res *admin.EditResult
	err = s.st.Update(ctx, func(w store.Writer) error {
		var err error
		res, err = s.edit(w, id, p)
		if err != nil {
			return err
		}
		return appendAudit(w, &domain.AuditEntry{
			At: s.opts.Now(), Actor: s.opts.Actor, Source: s.opts.Source, Action: action,
			Targets: targets, Result: domain.AuditOK, Detail: editDetail(res, p.Reason),
		})
	})
	if err != nil {
		result := domain.AuditError
		if errors.Is(err, domain.ErrConflict) {
			result = domain.AuditConflict
		}
		return nil, s.refused(ctx, action, targets, result, err)
	}
	return res, nil
}

// checkEdit checks what an edit asks before it reads the store: the
// payload limit and the reason, as a send and an action check them.
func (s *Service) checkEdit(p admin.EditParams) error {
	if err := domain.ValidatePayload(int64(len(p.Payload)), s.opts.MaxPayload); err != nil {
		return fmt.Errorf("message %s: the new %w; nothing was changed", p.ID, err)
	}
	if p.Version < 0 {
		return domain.Invalidf("message %s: payload version %d must be 1 or more", p.ID, p.Version)
	}
	if err := domain.ValidateReason(p.Reason); err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	return nil
}

// edit applies one edit in w.
func (s *Service) edit(w store.Writer, id string, p admin.EditParams) (*admin.EditResult, error) {
	if err := store.LockQueues(w, nil, []string{id}); err != nil {
		return nil, err
	}
	m, err := w.Message(id)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(admin.EditableStatuses, m.Status) {
		return nil, domain.Conflictf("message %s: status is %s; message edit needs %s: a message on its way, delivered or failed keeps its payload",
			id, m.Status, domain.Alternatives(admin.EditableStatuses))
	}
	if p.Resend && m.Status == domain.StatusHOLD {
		return nil, domain.WithHint(domain.ErrConflict,
			fmt.Sprintf("message %s: status is HOLD, so it cannot be resent: it goes on when the head of its queue %s does; nothing was changed", id, m.Queue),
			"edit it without --resend, then resend or fail the head ('queuectl queue show "+m.Queue+"')")
	}
	version, err := w.PayloadVersions(id)
	if err != nil {
		return nil, err
	}
	if p.Version != 0 && p.Version != version {
		return nil, admin.VersionMismatch(fmt.Sprintf("message %s: the edit replaces payload version %d, but the current one is %d (someone edited it meanwhile); nothing was changed",
			id, p.Version, version), "read it again ('queuectl message payload "+id+"') and edit that")
	}
	old, err := w.Payload(id)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(old, p.Payload) {
		return nil, domain.Invalidf("message %s: the new payload is the same as version %d; nothing was changed", id, version)
	}
	res := &admin.EditResult{ID: id, Status: m.Status,
		Previous: admin.VersionOf(version, old), Current: admin.VersionOf(version+1, p.Payload)}
	reason := fmt.Sprintf("%s by %s: %s", admin.ActEdit, s.opts.Actor, versionChange(res))
	if p.Reason != "" {
		reason += ": " + p.Reason
	}
	now := s.opts.Now()
	_, err = w.EditPayload(store.EditPayloadParams{ID: id, From: admin.EditableStatuses, Version: version, Payload: p.Payload,
		History: domain.HistoryEntry{At: now, Actor: s.opts.Actor, Reason: reason}})
	if errors.Is(err, store.ErrVersionChanged) {
		return nil, admin.VersionMismatch(fmt.Sprintf("message %s: its payload was edited meanwhile; nothing was changed", id), "")
	}
	if err != nil {
		return nil, err
	}
	if !p.Resend {
		return res, nil
	}
	// Asked for one message by its id, with its payload corrected: a
	// blacklisted message is released, crashes reset, and its history
	// says so, as blacklist release would.
	verb, resend := admin.ActResend, messageActions[admin.ActResend]
	if m.Blacklisted {
		verb, resend = admin.ActRelease, messageActions[admin.ActRelease]
		res.Released = true
	}
	h := domain.HistoryEntry{At: now, Actor: s.opts.Actor, Reason: fmt.Sprintf("%s by %s after message.edit", verb, s.opts.Actor)}
	if _, err := w.Transition(store.TransitionParams{ID: id, From: []domain.Status{m.Status}, To: resend.to, History: h,
		Update: func(nm *domain.Message) { resend.update(nm, admin.ActParams{}, s.opts.Actor) }}); err != nil {
		return nil, err
	}
	if err := store.RestoreHold(w, m.Queue, domain.HistoryEntry{At: now, Actor: s.opts.Actor}); err != nil {
		return nil, err
	}
	res.Status, res.Resent = resend.to, true
	return res, nil
}

// versionChange says what an edit changed: both versions' sizes and SHA-256.
func versionChange(r *admin.EditResult) string {
	return fmt.Sprintf("payload version %d (%d bytes, sha256 %s) → version %d (%d bytes, sha256 %s)",
		r.Previous.Version, r.Previous.Size, r.Previous.SHA256, r.Current.Version, r.Current.Size, r.Current.SHA256)
}

// editDetail is the audit entry's detail of an edit.
func editDetail(r *admin.EditResult, reason string) string {
	d := versionChange(r)
	switch {
	case r.Released:
		d += "; resent, released from the blacklist (crashes reset)"
	case r.Resent:
		d += "; resent"
	}
	if reason != "" {
		d += "; reason: " + reason
	}
	return d
}

// PayloadVersion returns version n of a message's payload; 0 is the current one.
func (s *Service) PayloadVersion(ctx context.Context, id string, n int) ([]byte, error) {
	if n == 0 {
		return s.Payload(ctx, id)
	}
	id, err := messageID(id)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, domain.Invalidf("payload version %d must be 1 or more", n)
	}
	var p []byte
	err = s.view(ctx, func(r store.Reader) error {
		var err error
		p, err = r.PayloadVersion(id, n)
		return err
	})
	return p, err
}
