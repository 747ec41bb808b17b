package embedded

import (
	"context"

	"github.com/queuectl/queuectl/internal/admin"
)

// WhoAmI returns who the calls act for: the operator, as admin, on the
// store itself or through the socket of the process holding it. Asking
// finds out whether the store can be used at all.
func (s *Service) WhoAmI(ctx context.Context) (*admin.Identity, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.Identity, error) { return svc.WhoAmI(ctx) })
}
