package bolt

import (
	"context"

	"github.com/queuectl/queuectl/internal/store"
)

var _ store.NodeLister = (*Store)(nil)

// owner is the id of the node serving the store, or "".
func (s *Store) owner() string {
	if n := s.serving.Load(); n != nil {
		return n.ID
	}
	return ""
}

// Nodes lists the one node an embedded store can have: the engine of the
// process that holds the file, once it joined and until it leaves. It holds
// every queue's lease. Another process cannot open the file while it is
// held, so an embedded store that lists no node has no engine delivering
// from it; nothing of a past incarnation is kept to list.
func (s *Store) Nodes(ctx context.Context, p store.NodesParams) ([]store.NodeInfo, error) {
	n := s.serving.Load()
	if n == nil {
		return nil, nil
	}
	info := *n
	err := s.View(ctx, func(r store.Reader) error {
		return r.Queues("", func(*store.QueueRecord) error {
			info.Queues++
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	info.Alive = p.TTL <= 0 || s.now().Sub(info.HeartbeatAt) < p.TTL
	info.State = store.NodeAlive
	if !info.Alive {
		info.State = store.NodeDead
	}
	return []store.NodeInfo{info}, nil
}
