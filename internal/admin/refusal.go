package admin

import (
	"slices"

	"github.com/queuectl/queuectl/internal/domain"
)

// Refusal is a request refused before it reached the service: a usage
// error that a front end found in its arguments or input (§6: a refusal is
// audited the same way in embedded and remote mode, whatever layer refused
// it). RecordRefusal writes its audit entry, naming the caller.
type Refusal struct {
	// Action is what was asked, as the audit log names it (see Check).
	Action  string   `json:"action"`
	Targets []string `json:"targets"`
	// Reason is why it was refused: the error the user was shown.
	Reason string `json:"reason"`
}

// Check refuses a refusal that names no action whose refusals are
// audited: every change of §6, and send.
func (r Refusal) Check() error {
	if slices.Contains(AuditActions, r.Action) {
		return nil
	}
	return domain.Invalidf("action %q is not one whose refusals are audited", r.Action)
}

// AuditActions lists the actions the audit log names, in the order of a
// message's life: sent, committed or rolled back, resent or failed, its
// payload corrected, released from the blacklist or failed there; then the queues' and the
// store's: stop, start, delete, tuning, purge, the EOIO switch.
var AuditActions = []string{"send", string(ActCommit), string(ActRollback), string(ActResend), string(ActFail),
	string(ActEdit), string(ActRelease), string(ActBlacklistFail), string(ActStop), string(ActStart), string(ActDeleteQueue),
	"tune.set", "tune.unset", "purge",
	"eoio.switch"}
