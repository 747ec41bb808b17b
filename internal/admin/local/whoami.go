package local

import (
	"context"

	"github.com/queuectl/queuectl/internal/admin"
)

// WhoAmI returns the holder of the token a request's context names (the
// HTTP API's caller), or else the owner of the store — the operator of
// embedded mode, or on a server's socket — who may do everything.
func (s *Service) WhoAmI(ctx context.Context) (*admin.Identity, error) {
	if c, ok := admin.CallerFrom(ctx); ok && c.Role != "" {
		return admin.NewIdentity(c.Actor, c.Role), nil
	}
	return admin.OwnerIdentity(s.as(ctx).opts.Actor), nil
}
