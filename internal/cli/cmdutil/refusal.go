package cmdutil

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
)

// Annotations of commands: auditAnnotation marks one whose refusals are
// audited (§6), its value the action the audit log names;
// createsAnnotation one that may create the embedded store.
const (
	auditAnnotation   = "queuectl.audit"
	createsAnnotation = "queuectl.creates-store"
	actsAnnotation    = "queuectl.acts"
)

// Acts marks cmd as one that changes the store although its refusals are
// not audited (migrate, bench fill): like an audited command, it names a
// target that a context chose (Factory.AnnounceContextTarget).
func Acts(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[actsAnnotation] = "true"
}

// MayAct reports whether cmd changes something: Audited or Acts marked it.
func MayAct(cmd *cobra.Command) bool {
	return cmd.Annotations[auditAnnotation] != "" || cmd.Annotations[actsAnnotation] != ""
}

// Audited marks cmd as one whose refused requests are audited as action,
// however they are refused: by the service, or by the command itself for a
// usage error in its arguments or input (RecordRefusal).
func Audited(cmd *cobra.Command, action string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[auditAnnotation] = action
}

// AuditAction returns the action Audited gave cmd, or "".
func AuditAction(cmd *cobra.Command) string { return cmd.Annotations[auditAnnotation] }

// CreatesStore marks cmd as one that may create the embedded store when it
// does not exist yet: a first send, a first tuning value. Every other
// command refuses a store that is not there rather than making an empty
// one (and its directories) at a mistyped path.
func CreatesStore(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[createsAnnotation] = "true"
}

// MayCreateStore reports whether CreatesStore marked cmd.
func MayCreateStore(cmd *cobra.Command) bool { return cmd.Annotations[createsAnnotation] != "" }

// ErrNoTargets marks the usage error of an action given nothing to act on
// (`message resend` without ids): the command was never an action on
// anything, so it is not audited as one.
var ErrNoTargets = errors.New("nothing to act on")

// noTargets is a usage error that is also ErrNoTargets.
type noTargets struct{ error }

func (e noTargets) Unwrap() error { return e.error }

func (e noTargets) Is(target error) bool { return target == ErrNoTargets }

// RecordRefusal writes the audit entry of a request the command refused
// itself, before the service saw it, so that a refusal is audited the same
// way in embedded and remote mode, whatever layer refused it (§6). It goes
// through the service the command would have used: the store (never
// creating one), the server's socket, or the remote server, which records
// it under the caller's token. A service that cannot be reached records
// nothing; the user saw the refusal all the same. When the command opened
// the service, the service saw the request and audited any refusal of it
// itself: nothing is recorded twice.
func (f *Factory) RecordRefusal(ctx context.Context, r admin.Refusal) {
	if f.admin != nil || f.adminErr != nil {
		return
	}
	f.CreateStore = false
	svc, err := f.Admin()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = svc.RecordRefusal(ctx, r)
}
