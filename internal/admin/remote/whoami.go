package remote

import (
	"context"
	"net/http"

	"github.com/queuectl/queuectl/internal/admin"
)

// WhoAmI asks the server who its token is: name, role and the commands it
// may run. A server that cannot be reached, or that refuses the token, says
// so as every other call would.
func (c *Client) WhoAmI(ctx context.Context) (*admin.Identity, error) {
	var id admin.Identity
	if err := c.do(ctx, http.MethodGet, "/v1/whoami", nil, nil, &id); err != nil {
		return nil, err
	}
	return &id, nil
}
