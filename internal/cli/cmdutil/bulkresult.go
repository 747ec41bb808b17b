package cmdutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// ErrPartial marks a bulk action that changed some but not all of its
// targets: exit 5.
var ErrPartial = errors.New("partial")

// printedError is an error whose explanation the command has already
// printed (a bulk result): its kind decides the exit code, but it is not
// printed again.
type printedError struct{ err error }

func (e *printedError) Error() string { return e.err.Error() }
func (e *printedError) Unwrap() error { return e.err }

// Printed reports that the error was explained already.
func (e *printedError) Printed() bool { return true }

// Printed wraps err to say that the command has printed its explanation.
func Printed(err error) error { return &printedError{err: err} }

// bulkOutcome turns a printed result into the exit code's error (§5): nil
// when every target changed, ErrPartial when some did, a conflict when none
// did and some were skipped, not found when every target was missing.
func bulkOutcome(res *admin.BulkResult) error {
	skipped, missing := len(res.Skipped), len(res.NotFound)
	total := res.Changed + skipped + missing
	switch {
	case skipped+missing == 0:
		return nil
	case res.Changed > 0:
		return Printed(domain.Errorf(ErrPartial, "%d of %d changed", res.Changed, total))
	case skipped > 0:
		return Printed(domain.Conflictf("none of %d changed: %d skipped, %d not found", total, skipped, missing))
	}
	return Printed(domain.NotFoundf("none of %d found", total))
}

// printBulk prints the aggregated result: the object for json, jsonl and
// yaml, the changed targets for ids (with what did not change on stderr),
// and a short summary for a table.
func printBulk(streams *IOStreams, f output.Format, a *BulkAction, res *admin.BulkResult) error {
	if f == output.IDs {
		if err := output.Value(streams.Out, f, res, nil, func() []string { return res.ChangedIDs }); err != nil {
			return err
		}
		return printUnchanged(streams.ErrOut, res)
	}
	return output.Value(streams.Out, f, res, func(w io.Writer, _ bool) error {
		return printBulkSummary(w, a, res)
	}, nil)
}

// printBulkSummary is the table form: one line for what changed, then one
// per target that did not.
func printBulkSummary(w io.Writer, a *BulkAction, res *admin.BulkResult) error {
	verb := "changed"
	if res.DryRun {
		verb = "would change"
	}
	total := res.Changed + len(res.Skipped) + len(res.NotFound)
	count := FormatCount(res.Changed)
	if total != res.Changed {
		count += " of " + FormatCount(total)
	}
	if _, err := fmt.Fprintf(w, "%s %s: %s %s\n", verb, count, a.Verb, a.Change); err != nil {
		return err
	}
	return printUnchanged(w, res)
}

// printUnchanged writes a line per skipped and per missing target.
func printUnchanged(w io.Writer, res *admin.BulkResult) error {
	for _, s := range res.Skipped {
		var err error
		if s.Status == "" {
			_, err = fmt.Fprintf(w, "skipped %s: %s\n", s.ID, s.Reason)
		} else {
			_, err = fmt.Fprintf(w, "skipped %s (%s): %s\n", s.ID, s.Status, s.Reason)
		}
		if err != nil {
			return err
		}
	}
	for _, id := range res.NotFound {
		if _, err := fmt.Fprintf(w, "not found %s\n", id); err != nil {
			return err
		}
	}
	return nil
}
