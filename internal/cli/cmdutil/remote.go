package cmdutil

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// remoteTarget returns the server to talk to and the token to use: --server
// (QUEUECTL_SERVER), else the context named by --context or current_context.
// An empty server means embedded mode.
func remoteTarget(c *config.Config) (server, token string, err error) {
	server = c.ServerURL
	tokenFile := c.TokenFile
	name := c.Context
	if name == "" && server == "" {
		name = c.CurrentContext
	}
	if name != "" {
		ctx, ok := c.Contexts[name]
		if !ok {
			return "", "", domain.Invalidf("context %q is not defined under contexts: in the config file", name)
		}
		if server == "" {
			server = ctx.Server
		}
		if tokenFile == "" {
			tokenFile = ctx.TokenFile
		}
	}
	if server == "" {
		return "", "", nil
	}
	token = c.Token
	if token == "" && tokenFile != "" {
		b, err := os.ReadFile(expandHome(tokenFile))
		if err != nil {
			return "", "", domain.Invalidf("token file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return server, token, nil
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
