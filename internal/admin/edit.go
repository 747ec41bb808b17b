package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/queuectl/queuectl/internal/domain"
)

// ActEdit names the correction of a message's payload in the audit log
// and in the access model: it is run by `message edit`.
const ActEdit Action = "message.edit"

// Editor corrects messages instead of failing them (§5 message edit).
type Editor interface {
	// EditPayload stores a corrected payload of an NDLV, WAIT or HOLD
	// message as a new version — the earlier ones kept — with a history
	// and an audit entry, and, with p.Resend, resends the message in the
	// same transaction. The message keeps its queue and its place in it.
	EditPayload(ctx context.Context, p EditParams) (*EditResult, error)
	// PayloadVersion returns version n of a message's payload: 1 is the
	// payload it was sent with; 0 is the current one, as Payload.
	PayloadVersion(ctx context.Context, id string, n int) ([]byte, error)
}

// EditParams describe one correction of a payload.
type EditParams struct {
	ID      string
	Payload []byte
	// Version, when set, is the version the edit replaces (HTTP
	// If-Match): when the message's current version is another, nothing
	// changes and the error wraps ErrVersionMismatch.
	Version int
	// Resend resends the message (NDLV or WAIT → TBDL) in the same step.
	Resend bool
	// Reason is recorded in the history and audit entry.
	Reason string
}

// EditResult says what an edit stored.
type EditResult struct {
	ID string `json:"id" yaml:"id"`
	// Status is the message's status after the edit: TBDL when resent.
	Status   domain.Status `json:"status" yaml:"status"`
	Previous Version       `json:"previous" yaml:"previous"`
	Current  Version       `json:"current" yaml:"current"`
	Resent   bool          `json:"resent" yaml:"resent"`
	// Released says the message resent was blacklisted: it was released,
	// its crashes reset.
	Released bool `json:"released,omitempty" yaml:"released,omitempty"`
}

// Version is one version of a payload: its number, size and SHA-256.
type Version struct {
	Version int    `json:"version" yaml:"version"`
	Size    int64  `json:"size" yaml:"size"`
	SHA256  string `json:"sha256" yaml:"sha256"`
}

// VersionOf describes payload as version n.
func VersionOf(n int, payload []byte) Version {
	sum := sha256.Sum256(payload)
	return Version{Version: n, Size: int64(len(payload)), SHA256: hex.EncodeToString(sum[:])}
}

// ErrVersionMismatch marks an edit whose expected version is no longer
// the message's current one (HTTP 412): someone else edited it first.
var ErrVersionMismatch = domain.Errorf(domain.ErrConflict, "the payload version changed")

// VersionMismatch returns an error wrapping ErrVersionMismatch whose text
// is msg, with an optional hint line.
func VersionMismatch(msg, hint string) error { return &versionMismatch{msg: msg, hint: hint} }

type versionMismatch struct{ msg, hint string }

func (e *versionMismatch) Error() string { return e.msg }
func (e *versionMismatch) Unwrap() error { return ErrVersionMismatch }

// Hint returns the hint line, if any.
func (e *versionMismatch) Hint() string { return e.hint }

// EditableStatuses are the statuses a message's payload may be edited in.
var EditableStatuses = []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}
