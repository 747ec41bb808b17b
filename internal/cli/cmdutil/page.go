package cmdutil

import (
	"io"

	"github.com/queuectl/queuectl/internal/output"
)

// Page is one page of a list command: message list, tx list, audit list.
type Page[T any] struct {
	Columns []output.Column[T]
	// Cursor is what -o ids prints and what --after takes to go on.
	Cursor func(T) string
	// Limit is --limit; 0 is all.
	Limit int
	// Walk asks the service for at most limit items (0: all) and hands
	// each to add.
	Walk func(limit int, add func(T) error) error
	// Empty is the hint when nothing matches (a plain text, no verbs).
	Empty string
	// Why, if set, adds to Empty why nothing matched: a name the filters
	// give that does not exist, and the one it most likely meant.
	Why func() string
}

// PrintPage streams a page in the chosen format. It asks for one item more
// than it shows, to tell on stderr where the next page starts — in every
// format: a pipe of -o ids that stops at --limit says so instead of passing
// on part of the list in silence. A table also says when nothing matched.
func PrintPage[T any](out io.Writer, format output.Format, hintf func(string, ...any), p Page[T]) error {
	limit := p.Limit
	if limit > 0 {
		limit++
	}
	l := output.NewList(out, format, p.Columns, p.Cursor)
	var last T
	more := false
	err := p.Walk(limit, func(it T) error {
		if p.Limit > 0 && l.Count() == p.Limit {
			more = true
			return nil
		}
		last = it
		return l.Add(it)
	})
	if err != nil {
		return err
	}
	if err := l.Close(); err != nil {
		return err
	}
	switch {
	case l.Count() == 0 && format.Tabular():
		why := ""
		if p.Why != nil {
			why = p.Why()
		}
		if why == "" {
			hintf(p.Empty)
		} else {
			hintf("%s", p.Empty+why)
		}
	case more:
		hintf("showing the first %d; next page: --after %s (or --limit 0 for all)", p.Limit, p.Cursor(last))
	}
	return nil
}
