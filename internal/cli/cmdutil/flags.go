package cmdutil

import (
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// FlagError marks a usage error found while checking flags: exit 2.
func FlagError(format string, args ...any) error { return domain.Invalidf(format, args...) }

// SplitList splits comma-separated flag values (repeated flags are joined
// first), dropping empty items.
func SplitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// ParseAge reads an --older-than/--newer-than value: a duration back from
// now (90m, 2h, 7d) or an RFC 3339 time.
func ParseAge(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	s := v
	mult := time.Duration(1)
	if strings.HasSuffix(s, "d") {
		s, mult = strings.TrimSuffix(s, "d")+"h", 24
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return time.Time{}, domain.Invalidf("--%s %q must not be negative", flag, v)
	}
	if err != nil {
		return time.Time{}, domain.Invalidf("--%s %q is neither a duration (90s, 15m, 2h, 7d) nor an RFC 3339 time", flag, v)
	}
	return now.Add(-d * mult), nil
}
