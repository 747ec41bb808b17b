package local

import (
	"context"
	"slices"

	"github.com/queuectl/queuectl/internal/store"
)

// deliverers says which receivers some node delivers to, for the state
// UNCONFIGURED of `queue list` (§5, §8).
type deliverers struct {
	// known is false when the service cannot tell: then no queue is
	// UNCONFIGURED.
	known     bool
	receivers []string
}

// configured reports whether a queue of receiver r (an outbound queue) has
// a node to deliver it, as far as the service can tell.
func (d deliverers) configured(r string) bool {
	return !d.known || slices.Contains(d.receivers, r)
}

// deliverers finds the receivers the store's messages can be delivered to:
// those of its live nodes, as their node records published them — the
// engine in this process or the one whose socket a command reached, the
// nodes of a cluster; when no node is alive, those of this configuration
// (Options.Receivers): the configuration a serve started with it would
// have. A configuration without receivers says nothing (a command run on a
// bare store, with no config file, is no engine's configuration), nor does
// a live node that published none (an earlier version, which delivers to
// every receiver).
func (s *Service) deliverers(ctx context.Context) (deliverers, error) {
	if lister, ok := s.st.(store.NodeLister); ok {
		nodes, err := lister.Nodes(ctx, store.NodesParams{TTL: s.opts.LeaseTTL})
		if err != nil {
			return deliverers{}, err
		}
		d, live := deliverers{known: true}, false
		for _, n := range nodes {
			if !n.Alive {
				continue
			}
			live = true
			if n.Receivers == nil {
				return deliverers{}, nil
			}
			d.receivers = append(d.receivers, n.Receivers...)
		}
		if live {
			return d, nil
		}
	}
	if len(s.opts.Receivers) == 0 {
		return deliverers{}, nil
	}
	return deliverers{known: true, receivers: s.opts.Receivers}, nil
}
