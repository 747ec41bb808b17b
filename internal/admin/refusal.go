package admin

import "github.com/queuectl/queuectl/internal/domain"

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
	switch Action(r.Action) {
	case "send", ActResend, ActFail, ActRelease, ActBlacklistFail, ActCommit, ActRollback, ActStop, ActStart,
		"tune.set", "tune.unset", "purge", "eoio.switch":
		return nil
	}
	return domain.Invalidf("action %q is not one whose refusals are audited", r.Action)
}
