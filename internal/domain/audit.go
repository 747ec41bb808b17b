package domain

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

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

// AuditResults lists the results, from the one that changed something to
// the refusals.
var AuditResults = []string{AuditOK, AuditConflict, AuditDenied, AuditError}

// Param is one stored tuning value (§7).
type Param struct {
	Name  string `json:"param" yaml:"param"`
	Sub   string `json:"sub" yaml:"sub"`
	Value int    `json:"value" yaml:"value"`
}

// Bounds of one audit entry (§6): whoever makes a request that is refused
// decides what it holds (a path, a reason, a list of targets), so each
// entry is cut to a size that cannot grow the store much, with a count of
// what was left out.
const (
	MaxAuditTargets     = 1000 // a bulk action's chunk: its entries are complete
	MaxAuditTarget      = 128  // ids are 36 bytes, queue names 24, tuning values PARAM/SUB up to 81
	MaxAuditName        = 128  // actor, source, action
	MaxAuditDetail      = 2048
	auditTargetsOmitted = "targets: %d of %d recorded"
)

// Bound cuts e to the bounds of an audit entry. What is left out is
// counted: a cut text ends with "… (N more bytes)", and when targets are
// left out the detail says how many were recorded of how many.
func (e *AuditEntry) Bound() {
	e.Actor = cutText(e.Actor, MaxAuditName)
	e.Source = cutText(e.Source, MaxAuditName)
	e.Action = cutText(e.Action, MaxAuditName)
	note := ""
	if n := len(e.Targets); n > MaxAuditTargets {
		e.Targets = e.Targets[:MaxAuditTargets:MaxAuditTargets]
		note = fmt.Sprintf(auditTargetsOmitted, MaxAuditTargets, n)
	}
	e.Detail = cutText(e.Detail, MaxAuditDetail-len(note)-2)
	switch {
	case note != "" && e.Detail != "":
		e.Detail += "; " + note
	case note != "":
		e.Detail = note
	}
	cut := false
	for i, t := range e.Targets {
		if len(t) > MaxAuditTarget {
			if !cut {
				e.Targets, cut = slices.Clone(e.Targets), true
			}
			e.Targets[i] = cutText(t, MaxAuditTarget)
		}
	}
}

// cutText shortens s to about max bytes, at a character boundary, saying
// how many bytes were left out.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	keep := max - 24 // room for the note
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:keep], len(s)-keep)
}
