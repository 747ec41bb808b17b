package remote

import (
	"context"
	"net/http"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
)

// EOIOStatus reads the switch state from the server.
func (c *Client) EOIOStatus(ctx context.Context) (*admin.EOIOStatus, error) {
	var st admin.EOIOStatus
	if err := c.do(ctx, http.MethodGet, "/v1/eoio", nil, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// EOIOSwitch asks the server to switch; it checks the number itself.
func (c *Client) EOIOSwitch(ctx context.Context, p admin.EOIOSwitchParams) (*admin.EOIOStatus, error) {
	var st admin.EOIOStatus
	if err := c.do(ctx, http.MethodPost, "/v1/eoio/switch", nil, wire.EOIOSwitchBody{Queues: wire.TuneValue(p.Queues)}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
