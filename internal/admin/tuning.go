package admin

import (
	"fmt"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/placement"
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

// Canonical returns p with its words in the one case queuectl writes them:
// a parameter name, and the node-role subparameter of EO_INBOUND_PARALLEL,
// are keywords, matched ignoring case as statuses and qos are
// (eo_outbound_parallel is EO_OUTBOUND_PARALLEL). A receiver name is a
// name someone chose, and is kept as given.
func (p TuneParams) Canonical() TuneParams {
	for _, name := range []string{placement.ParamEOInbound, placement.ParamEOOutbound} {
		if strings.EqualFold(p.Param, name) {
			p.Param = name
		}
	}
	if p.Param == placement.ParamEOInbound {
		for _, r := range []domain.Role{domain.RoleSender, domain.RoleCentral, domain.RoleReceiver} {
			if strings.EqualFold(p.Sub, r.Subparameter()) {
				p.Sub = r.Subparameter()
			}
		}
	}
	return p
}
