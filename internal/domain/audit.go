package domain

import "time"

// AuditEntry is one operator action in the audit log (§5 audit list, §6).
type AuditEntry struct {
	Seq     uint64    `json:"seq" yaml:"seq"`
	At      time.Time `json:"at" yaml:"at"`
	Actor   string    `json:"actor" yaml:"actor"`
	Source  string    `json:"source" yaml:"source"`
	Action  string    `json:"action" yaml:"action"`
	Targets []string  `json:"targets" yaml:"targets"`
	Result  string    `json:"result" yaml:"result"` // ok | conflict | denied | error
	Detail  string    `json:"detail,omitempty" yaml:"detail,omitempty"`
}

// The results an audit entry may record.
const (
	AuditOK       = "ok"
	AuditConflict = "conflict"
	AuditDenied   = "denied"
	AuditError    = "error"
)

// Param is one stored tuning value (§7).
type Param struct {
	Name  string `json:"param" yaml:"param"`
	Sub   string `json:"sub" yaml:"sub"`
	Value int    `json:"value" yaml:"value"`
}
