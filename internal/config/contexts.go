package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// UndefinedContext is the error of a context name that contexts: does not
// define — given as field (--context, current_context) — naming the one it
// most likely meant and every one that is defined.
func (c *Config) UndefinedContext(field, name string) error {
	defined := slices.Sorted(maps.Keys(c.Contexts))
	msg := fmt.Sprintf("%s %q is not defined under contexts: in the config file%s", field, name, domain.DidYouMean(name, defined))
	if len(defined) == 0 {
		return domain.WithHint(domain.ErrInvalid, msg+"; it defines none", "add one under contexts: (see 'queuectl config view')")
	}
	return domain.WithHint(domain.ErrInvalid, msg+"; the contexts defined: "+strings.Join(defined, ", "),
		"list them with 'queuectl config view'")
}
