package embedded

import (
	"context"

	"github.com/queuectl/queuectl/internal/admin"
)

// EOIOStatus reads the switch state.
func (s *Service) EOIOStatus(ctx context.Context) (*admin.EOIOStatus, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.EOIOStatus, error) { return svc.EOIOStatus(ctx) })
}

// EOIOSwitch switches. Tried again after a lost answer, a switch that was
// made is refused as made already, so none is made twice.
func (s *Service) EOIOSwitch(ctx context.Context, p admin.EOIOSwitchParams) (*admin.EOIOStatus, error) {
	return call(ctx, s, func(svc admin.Service) (*admin.EOIOStatus, error) { return svc.EOIOSwitch(ctx, p) })
}
