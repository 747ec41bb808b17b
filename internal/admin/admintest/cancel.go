package admintest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

func testCanceled(t *testing.T, b *bundle) {
	m := b.sendOne(t, eo("x"))
	ctx, cancel := context.WithCancel(b.ctx)
	cancel()

	// A walk stops at once: fn is never called.
	called := false
	err := b.svc.Messages(ctx, admin.MessageFilter{}, func(*domain.Message) error {
		called = true
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, called)
	err = b.svc.Queues(ctx, admin.QueueFilter{}, func(*domain.Queue) error {
		called = true
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, called)

	_, err = b.svc.Message(ctx, m.ID)
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.svc.Send(ctx, []domain.SendRequest{eo("y")})
	require.ErrorIs(t, err, context.Canceled)
	_, err = b.svc.Act(ctx, admin.ActParams{Action: admin.ActStop, Targets: []string{m.Queue}})
	require.ErrorIs(t, err, context.Canceled)

	require.Equal(t, []string{m.ID}, ids(b.messages(t, admin.MessageFilter{})), "nothing was stored")
	q, err := b.svc.Queue(b.ctx, m.Queue)
	require.NoError(t, err)
	require.False(t, q.Stopped, "nothing was changed")
}
