package admintest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// kinds are the sentinels an error may wrap; exactly one must match.
var kinds = []error{domain.ErrInvalid, domain.ErrTooLarge, domain.ErrNotFound, domain.ErrConflict,
	domain.ErrUnavailable, domain.ErrPermission}

func testErrorKinds(t *testing.T, b *bundle) {
	b.sendOne(t, eo("x"))
	noop := func(*domain.Message) error { return nil }
	big := eo("")
	big.Payload = make([]byte, MaxPayload+1)
	for name, c := range map[string]struct {
		call func() error
		kind error
		msg  string
	}{
		"message not found": {func() error { _, err := b.svc.Message(b.ctx, unknownID); return err },
			domain.ErrNotFound, "message " + unknownID + " does not exist"},
		"payload not found": {func() error { _, err := b.svc.Payload(b.ctx, unknownID); return err },
			domain.ErrNotFound, "message " + unknownID + " does not exist"},
		"queue not found": {func() error { _, err := b.svc.Queue(b.ctx, "XBQINOPE"); return err },
			domain.ErrNotFound, "queue XBQINOPE does not exist"},
		"queue dot-dot not found": {func() error { _, err := b.svc.Queue(b.ctx, ".."); return err },
			domain.ErrNotFound, "queue .. does not exist"},
		"queue with slashes not found": {func() error { _, err := b.svc.Queue(b.ctx, "XBQIA//B/../C"); return err },
			domain.ErrNotFound, "queue XBQIA//B/../C does not exist"},
		"queue messages not found": {func() error {
			return b.svc.QueueMessages(b.ctx, "XBQINOPE", admin.QueueMessagesParams{}, noop)
		}, domain.ErrNotFound, "queue XBQINOPE does not exist"},
		"malformed id": {func() error { _, err := b.svc.Message(b.ctx, "0193"); return err },
			domain.ErrInvalid, `message id "0193" is not a UUID (like 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f)`},
		"malformed payload id": {func() error { _, err := b.svc.Payload(b.ctx, "x y"); return err },
			domain.ErrInvalid, `message id "x y" is not a UUID (like 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f)`},
		"malformed cursor": {func() error { return b.svc.Messages(b.ctx, admin.MessageFilter{After: "z"}, noop) },
			domain.ErrInvalid, `message id "z" is not a UUID (like 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f)`},
		"malformed pattern": {func() error {
			return b.svc.Queues(b.ctx, admin.QueueFilter{Name: "["}, func(*domain.Queue) error { return nil })
		}, domain.ErrInvalid, `queue name pattern "[" is malformed: syntax error in pattern`},
		"unknown action": {func() error {
			_, err := b.svc.Act(b.ctx, admin.ActParams{Action: "queue.purge", Targets: []string{"XBTI0000"}})
			return err
		}, domain.ErrInvalid, `unknown action "queue.purge"`},
		"malformed target": {func() error {
			_, err := b.svc.Act(b.ctx, admin.ActParams{Action: admin.ActFail, Targets: []string{"nope"}})
			return err
		}, domain.ErrInvalid, `message id "nope" is not a UUID (like 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f); nothing was changed`},
		"bad tuning": {func() error { _, err := b.svc.Tune(b.ctx, set("X", "", "1")); return err },
			domain.ErrInvalid, `parameter "X" is not one of EO_INBOUND_PARALLEL, EO_OUTBOUND_PARALLEL`},
		"bad send": {func() error { _, err := b.svc.Send(b.ctx, []domain.SendRequest{{QoS: "EO"}}); return err },
			domain.ErrInvalid, "sender is required (1-60 characters of A-Z a-z 0-9 _ - .)"},
		"too large": {func() error { _, err := b.svc.Send(b.ctx, []domain.SendRequest{big}); return err },
			domain.ErrTooLarge, "payload is 65537 bytes; the limit (engine.max_payload) is 64KiB (65536 bytes)"},
	} {
		err := c.call()
		require.Error(t, err, name)
		require.EqualError(t, err, c.msg, name)
		for _, k := range kinds {
			require.Equal(t, k == c.kind, errors.Is(err, k), "%s: errors.Is(%v) of %v", name, k, err)
		}
	}
}
