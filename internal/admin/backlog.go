package admin

import (
	"cmp"
	"context"
	"slices"

	"github.com/queuectl/queuectl/internal/domain"
)

// ReceiverBacklog is what stored messages wait for of one receiver: the
// messages of its outbound queues still to be delivered.
type ReceiverBacklog struct {
	Receiver string `json:"receiver" yaml:"receiver"`
	// Messages counts them (domain.AwaitingDelivery), over Queues queues.
	Messages int64 `json:"messages" yaml:"messages"`
	Queues   int   `json:"queues" yaml:"queues"`
}

// Unconfigured lists, by receiver name, the receivers that messages stored
// in outbound queues wait for and that configured does not name (§8):
// what `serve` warns of at start and `config check` lists. It reads the
// queues' counters, not their messages.
func Unconfigured(ctx context.Context, svc Service, configured []string) ([]ReceiverBacklog, error) {
	byReceiver := map[string]*ReceiverBacklog{}
	err := svc.Queues(ctx, QueueFilter{Stages: []domain.Stage{domain.Outbound}}, func(q *domain.Queue) error {
		n := domain.AwaitingDelivery(q.Counts)
		if n == 0 || slices.Contains(configured, q.Receiver) {
			return nil
		}
		b := byReceiver[q.Receiver]
		if b == nil {
			b = &ReceiverBacklog{Receiver: q.Receiver}
			byReceiver[q.Receiver] = b
		}
		b.Messages += n
		b.Queues++
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]ReceiverBacklog, 0, len(byReceiver))
	for _, b := range byReceiver {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b ReceiverBacklog) int { return cmp.Compare(a.Receiver, b.Receiver) })
	return out, nil
}
