package cmdutil

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// remoteTarget returns the server to talk to and the token to use: --server
// (QUEUECTL_SERVER), else the server of the context in use. An empty server
// means embedded mode.
func remoteTarget(c *config.Config) (server, token string, err error) {
	server, tokenFile, _, err := serverOf(c)
	if err != nil {
		return "", "", err
	}
	if server == "" {
		return "", "", nil
	}
	token = c.Token
	if token == "" && tokenFile != "" {
		b, err := config.ReadBounded(ExpandHome(tokenFile), 64<<10)
		if err != nil {
			return "", "", domain.Invalidf("token file: %v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	return server, token, nil
}

// ExpandHome expands a leading ~/ to the user's home directory, as a shell
// would: a path in the config file, or quoted on the command line.
func ExpandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// serverOf is the server a command talks to — --server, else the selected
// context's — with the token file and the CA file that go with it.
func serverOf(c *config.Config) (server, tokenFile, caFile string, err error) {
	server, tokenFile, caFile = c.ServerURL, c.TokenFile, c.CAFile
	name, ctx, err := selectedContext(c)
	if err != nil {
		return "", "", "", err
	}
	if name != "" {
		if server == "" {
			server = ctx.Server
		}
		if tokenFile == "" {
			tokenFile = ctx.TokenFile
		}
		if caFile == "" {
			caFile = ctx.CAFile
		}
	}
	return server, tokenFile, caFile, nil
}

// remoteOptions are the options of a client of the server the
// configuration names.
func remoteOptions(c *config.Config, server, token string) (remote.Options, error) {
	_, _, caFile, err := serverOf(c)
	if err != nil {
		return remote.Options{}, err
	}
	if caFile != "" {
		caFile = ExpandHome(caFile)
	}
	return remote.Options{Server: server, Token: token, CAFile: caFile}, nil
}
