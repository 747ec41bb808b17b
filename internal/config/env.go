package config

import (
	"regexp"
	"strings"

	"github.com/queuectl/queuectl/internal/domain"
)

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validateEnv checks an exec receiver's env: and inherit_env: (§8). Names
// under QUEUECTL_ are the message's metadata, which the receiver sets
// itself; serve's own QUEUECTL_* settings (its token among them) never
// reach a command.
func validateEnv(receiver string, env map[string]string, inherit []string) error {
	check := func(key, name string) error {
		if !envName.MatchString(name) {
			return domain.Invalidf("receivers.%s.%s: %q is not an environment variable name (A-Z a-z 0-9 _, not starting with a digit)", receiver, key, name)
		}
		if strings.HasPrefix(strings.ToUpper(name), EnvPrefix+"_") {
			return domain.Invalidf("receivers.%s.%s: %s: the QUEUECTL_ variables are the message's metadata, set by queuectl", receiver, key, name)
		}
		return nil
	}
	for name, v := range env {
		if err := check("env", name); err != nil {
			return err
		}
		if strings.ContainsRune(v, 0) {
			return domain.Invalidf("receivers.%s.env: %s holds a NUL character, which no environment can carry", receiver, name)
		}
	}
	for _, name := range inherit {
		if err := check("inherit_env", name); err != nil {
			return err
		}
	}
	return nil
}
