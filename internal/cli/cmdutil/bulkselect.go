package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// ActionStatuses gives --all its statuses: those the action applies to when
// --status is not given, else the given ones, which must be among them —
// selecting messages the action would only skip is a usage error.
func ActionStatuses(given []domain.Status, applies []domain.Status, verb string) ([]domain.Status, error) {
	if len(given) == 0 {
		return applies, nil
	}
	for _, s := range given {
		if !slices.Contains(applies, s) {
			names := make([]string, len(applies))
			for i, a := range applies {
				names[i] = string(a)
			}
			return nil, domain.Invalidf("--status %s: %s applies only to %s messages", s, verb, strings.Join(names, ", "))
		}
	}
	return given, nil
}

// BulkHelp is the text on targets, dry runs and exit codes that every bulk
// command's help ends with. list names the command whose filters --all
// takes, and allNote says what --all selects by default.
func BulkHelp(noun, list, allNote string) string {
	target := noun + " ids"
	if noun == "queue" {
		target = "queue names"
	}
	return fmt.Sprintf(`Targets: %s as arguments; or - to read them from stdin, whitespace or
newline separated (as -o ids prints them); or --all with the filters of
'%s'. %s
--all counts the targets first and asks on a terminal; off a terminal it
needs --yes; it then acts on what it counted (not on what arrived since) as
one action. Ids from stdin are applied as they come, %d at a time, each
chunk one action. Every 1,000 targets share one transaction with their
audit entry. --dry-run prints what would change and changes nothing.

Each %s is changed on its own compare-and-set; one whose status does not
allow the action (or no longer does) is skipped, with its status and why.
Exit 0 when every target changed, 5 when only some did, 4 when none did and
some were skipped, 3 when none exists.`, target, list, allNote, BulkChunk, noun)
}
