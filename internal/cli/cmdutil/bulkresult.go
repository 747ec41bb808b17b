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

// tally counts the outcomes of a bulk run.
type tally struct{ changed, skipped, missing int }

func (t *tally) add(res *admin.BulkResult) {
	t.changed += res.Changed
	t.skipped += len(res.Skipped)
	t.missing += len(res.NotFound)
}

func (t tally) total() int { return t.changed + t.skipped + t.missing }

// bulkOutcome turns a printed result into the exit code's error (§5): nil
// when every target changed, ErrPartial when some did, a conflict when none
// did and some were skipped, not found when every target was missing.
func bulkOutcome(t tally) error {
	switch {
	case t.skipped+t.missing == 0:
		return nil
	case t.changed > 0:
		return Printed(domain.Errorf(ErrPartial, "%d of %d changed", t.changed, t.total()))
	case t.skipped > 0:
		return Printed(domain.Conflictf("none of %d changed: %d skipped, %d not found", t.total(), t.skipped, t.missing))
	}
	return Printed(domain.NotFoundf("none of %d found", t.total()))
}

// printBulk prints the aggregated result at the end: the object for json,
// jsonl and yaml, and a short summary for a table. -o ids printed its part
// as it went.
func printBulk(streams *IOStreams, f output.Format, a *BulkAction, res *admin.BulkResult, t tally) error {
	if f == output.IDs {
		return nil
	}
	return output.Value(streams.Out, f, res, func(w io.Writer, _ bool) error {
		return printBulkSummary(w, a, res, t)
	}, nil)
}

// printIDs prints one chunk's changed targets, and on stderr those that did
// not change.
func printIDs(streams *IOStreams, res *admin.BulkResult) error {
	if err := output.Value(streams.Out, output.IDs, res, nil, func() []string { return res.ChangedIDs }); err != nil {
		return err
	}
	return printUnchanged(streams.ErrOut, res)
}

// printBulkSummary is the table form: one line for what changed, then one
// per target that did not.
func printBulkSummary(w io.Writer, a *BulkAction, res *admin.BulkResult, t tally) error {
	verb := "changed"
	if res.DryRun {
		verb = "would change"
	}
	count := FormatCount(t.changed)
	if t.total() != t.changed {
		count += " of " + FormatCount(t.total())
	}
	apart := ""
	if res.BlacklistedChanged > 0 {
		apart = fmt.Sprintf(", %s of them blacklisted (crashes reset to 0)", FormatCount(res.BlacklistedChanged))
	}
	if _, err := fmt.Fprintf(w, "%s %s: %s %s%s\n", verb, count, a.Verb, a.Change, apart); err != nil {
		return err
	}
	if res.BlacklistedLeft > 0 {
		if _, err := fmt.Fprintln(w, leftAlone(res.BlacklistedLeft)); err != nil {
			return err
		}
	}
	return printUnchanged(w, res)
}

// printUnchanged writes a line per skipped and per missing target. A
// target is what the user gave, so it is escaped for the terminal.
func printUnchanged(w io.Writer, res *admin.BulkResult) error {
	for _, s := range res.Skipped {
		var err error
		if s.Status == "" {
			_, err = fmt.Fprintf(w, "skipped %s: %s\n", output.Escape(s.ID), output.Escape(s.Reason))
		} else {
			_, err = fmt.Fprintf(w, "skipped %s (%s): %s\n", output.Escape(s.ID), s.Status, output.Escape(s.Reason))
		}
		if err != nil {
			return err
		}
	}
	for _, id := range res.NotFound {
		if _, err := fmt.Fprintf(w, "not found %s\n", output.Escape(id)); err != nil {
			return err
		}
	}
	return nil
}
