package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/domain"
)

// UnknownNames says, for a list that matched nothing, which of the queue
// and receiver names its filters give exists nowhere — "; queue
// xbtoeab9 does not exist (did you mean XBTOEAB9?)" — or "" when every one
// does (or, for a receiver, when none known is near). A name is exact (queues, receivers); the suggestion is the one it
// most likely meant.
func UnknownNames(ctx context.Context, svc admin.Service, queues, receivers []string) string {
	for _, q := range queues {
		if _, err := svc.Queue(ctx, q); errors.Is(err, domain.ErrNotFound) {
			return "; " + err.Error()
		}
	}
	if len(receivers) == 0 {
		return ""
	}
	known, err := svc.Names(ctx, admin.NamesParams{Kind: admin.NameReceiver, Limit: admin.DefaultNames})
	if err != nil || len(known) == admin.DefaultNames {
		return ""
	}
	// A receiver named only at send time is in no list: one that is not
	// known is worth a word only when a known one is near.
	for _, r := range receivers {
		if s := domain.DidYouMean(r, known); s != "" && !slices.Contains(known, r) {
			return fmt.Sprintf("; no receiver %s is configured or has a queue%s", r, s)
		}
	}
	return ""
}
