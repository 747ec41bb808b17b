package output

import (
	"fmt"
	"time"
)

// Age renders how long ago t was, kubectl style: 45s, 12m, 5h, 3d. A nil or
// zero time renders as "-".
func Age(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	d := now.Sub(*t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Time renders a time as RFC 3339 UTC, or "-".
func Time(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// Dash returns s, or "-" for an empty string, so table cells are never blank.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Truncate shortens s to n characters with an ellipsis, for table cells.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return string(r[:n-1]) + "…"
}
