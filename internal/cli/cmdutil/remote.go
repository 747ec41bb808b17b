package cmdutil

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/remote"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// remoteTarget returns the server to talk to and the token to use: --server
// (QUEUECTL_SERVER), else the server of the context in use. An empty server
// means embedded mode.
func remoteTarget(c *config.Config) (server, token string, err error) {
	server = c.ServerURL
	tokenFile := c.TokenFile
	name, ctx, err := selectedContext(c)
	if err != nil {
		return "", "", err
	}
	if name != "" {
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
		b, err := config.ReadBounded(expandHome(tokenFile), 64<<10)
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

// socketService returns a client on the socket of a server that holds the
// store, if one answers; nil otherwise.
func socketService(sock string) admin.Service {
	if c := socketClient(sock); c != nil {
		return c
	}
	return nil
}

// socketClient is socketService's client, or nil.
func socketClient(sock string) *remote.Client {
	sock, err := filepath.Abs(sock)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(sock); err != nil {
		return nil
	}
	c, err := remote.New(remote.Options{Server: "unix://" + sock})
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !c.Healthy(ctx) {
		c.Close()
		return nil
	}
	return c
}
