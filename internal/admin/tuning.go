package admin

import (
	"fmt"

	"github.com/queuectl/queuectl/internal/domain"
)

// ParseTuningValue checks a tuning value as the operator wrote it — a
// whole number from 1 to MaxParallel — and returns it. It is the one rule
// the service applies to tune set and the TUI's dialog shows as it is typed;
// the error names the value, the parameter and the range.
func ParseTuningValue(param, value string) (int, error) {
	v, ok := domain.ParseWholeNumber(value)
	switch {
	case !ok:
		return 0, domain.Invalidf("value %q for %s is not a whole number from 1 to %d; nothing was changed", value, param, MaxParallel)
	case v == 0:
		return 0, domain.WithHint(domain.ErrInvalid,
			fmt.Sprintf("value 0 for %s is out of range: values are 1 to %d; nothing was changed", param, MaxParallel),
			"to go back to the default, unset the value (queuectl tune unset)")
	case v > MaxParallel:
		return 0, domain.Invalidf("value %d for %s must be from 1 to %d; nothing was changed", v, param, MaxParallel)
	}
	return v, nil
}
