package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// The rules of a transactional send's end (§9), shared by every store and
// every caller: the operator's or producer's tx commit and tx rollback go
// through CommitPrepared and RollbackPrepared, the engine's check-back
// through RecordCheck, which ends in the same two. So a producer's commit
// racing the check-back's is one compare-and-set on PEND against another:
// one wins, the other gets a conflict.

// CommitPrepared commits a prepared message: PEND→TBDL, its seq assigned
// now, so that EOIO order is commit order, and in an EOIO queue that is
// blocked held at once (TBDL→HOLD, by the HOLD rule). It is a
// compare-and-set on PEND. A committed message is no longer stuck; update,
// if set, changes other fields too (the check-back's count). It returns the
// message as stored after.
func CommitPrepared(w Writer, id string, h domain.HistoryEntry, update func(*domain.Message)) (*domain.Message, error) {
	m, err := w.Transition(TransitionParams{
		ID: id, From: []domain.Status{domain.StatusPEND}, To: domain.StatusTBDL, History: h,
		Update: func(m *domain.Message) {
			m.Stuck = false
			if update != nil {
				update(m)
			}
		},
	})
	if err != nil || m.QoS != domain.EOIO {
		return m, err
	}
	// The reason of a hold says which head holds the message back.
	if err := RestoreHold(w, m.Queue, domain.HistoryEntry{At: h.At, Node: h.Node, Actor: h.Actor}); err != nil {
		return nil, err
	}
	return w.Message(id)
}

// RollbackPrepared rolls a prepared message back: it is deleted with its
// payload and history, never delivered; the caller keeps the rollback in
// the audit log. It is a compare-and-set on PEND and returns the message as
// it was.
func RollbackPrepared(w Writer, id string) (*domain.Message, error) {
	m, err := w.Message(id)
	if err != nil {
		return nil, err
	}
	if m.Status != domain.StatusPEND {
		return nil, domain.Conflictf("message %s: status is %s, expected PEND", id, m.Status)
	}
	return m, w.Delete(id)
}

// auditRollback is the audit action of a rollback: that of tx rollback.
const auditRollback = "tx.rollback"

// RecordCheck applies one check-back outcome (CheckStore.RecordChecks),
// recorded by node at the store's time at: a compare-and-set on PEND and on
// the claim (o.CheckedAt). Every outcome counts a check and is in the
// message's history: commit commits (CommitPrepared), rollback deletes
// (RollbackPrepared) and writes the audit entry that keeps it, and an
// unanswered check leaves the message PEND (a PEND→PEND entry) — stuck at
// maxChecks checks, or at once with o.GiveUp. A rolled-back message is
// returned as it was when it was deleted.
func RecordCheck(w Writer, node Node, o CheckOutcome, maxChecks int, at time.Time) (*domain.Message, error) {
	m, err := w.Message(o.ID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.Conflictf("message %s: it no longer exists (rolled back)", o.ID)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case m.Status != domain.StatusPEND:
		return nil, domain.Conflictf("message %s: status is %s, expected PEND (committed meanwhile)", o.ID, m.Status)
	case m.LastCheckAt == nil || !m.LastCheckAt.Equal(o.CheckedAt):
		return nil, domain.Conflictf("message %s: it was claimed for another check since this one (%s)",
			o.ID, o.CheckedAt.Format(time.RFC3339Nano))
	}
	n := m.Checks + 1
	counted := func(m *domain.Message) { m.Checks, m.LastAnswer = n, o.Answer }
	switch o.Kind {
	case CheckCommit:
		h := EngineEntry(at, node, fmt.Sprintf("committed by check-back %d: sender %s answered commit (%s)", n, m.Sender, o.Detail))
		return CommitPrepared(w, m.ID, h, counted)
	case CheckRollback:
		if _, err := RollbackPrepared(w, m.ID); err != nil {
			return nil, err
		}
		counted(m)
		return m, w.AppendAudit(&domain.AuditEntry{
			At: at, Actor: "engine", Source: "node " + node.ID, Action: auditRollback, Targets: []string{m.ID},
			Result: domain.AuditOK,
			Detail: fmt.Sprintf("rolled back by check-back %d: sender %s answered rollback (%s); the message was in queue %s, interface %s, prepared at %s",
				n, m.Sender, o.Detail, m.Queue, dash(m.Interface), m.CreatedAt.Format(time.RFC3339)),
		})
	case CheckUnanswered:
		stuck := o.GiveUp || n >= maxChecks
		reason := fmt.Sprintf("check-back %d of %d unanswered (%s): %s", n, maxChecks, o.Answer, o.Detail)
		if stuck {
			reason += "; stuck: it stays PEND until an operator commits or rolls it back"
		}
		return w.Transition(TransitionParams{
			ID: m.ID, From: []domain.Status{domain.StatusPEND}, To: domain.StatusPEND,
			History: EngineEntry(at, node, reason),
			Update: func(m *domain.Message) {
				counted(m)
				m.Stuck = stuck
			},
		})
	}
	return nil, fmt.Errorf("message %s: check outcome kind %d is unknown", o.ID, o.Kind)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
