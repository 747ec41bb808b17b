package cmdutil

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/queuectl/queuectl/internal/admin/remote"
)

// PayloadLimit returns engine.max_payload of the service the command will
// reach, without opening the embedded store: the server's when a server is
// named or answers on the store file's socket, else this configuration's. A
// command reads its input up to this bound before it opens the store, so it
// never holds the store while it waits for input (§6), and never buffers
// more than it could store (§2).
func (f *Factory) PayloadLimit(ctx context.Context) (int64, error) {
	c, err := f.Config()
	if err != nil {
		return 0, err
	}
	server, token, err := remoteTarget(c)
	if err != nil {
		return 0, err
	}
	var client *remote.Client
	if server != "" {
		ro, err := remoteOptions(c, server, token)
		if err != nil {
			return 0, err
		}
		if client, err = remote.New(ro); err != nil {
			return 0, err
		}
	} else {
		loc, err := ResolveStore(c)
		if err != nil {
			return 0, err
		}
		// A PostgreSQL store is used directly, with this configuration.
		if loc.Postgres != "" {
			return int64(c.Engine.MaxPayload), nil
		}
		if client = socketClient(loc.Path + ".sock"); client == nil {
			return int64(c.Engine.MaxPayload), nil
		}
	}
	defer client.Close()
	return client.MaxPayload(ctx)
}

// socketClient returns a client on the socket of a process that holds the
// store, if one answers; nil otherwise.
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
