package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The embedded store's side of store.EngineStore. One process holds the
// file (bbolt's lock), so it holds every queue's lease: Join starts a new
// epoch, which is also the incarnation of the node that joined, and every
// engine write checks it. Every DLNG message found at a Join belongs to an
// incarnation that died.

var _ store.EngineStore = (*Store)(nil)

// Now returns the store's clock, to the microsecond the store keeps.
func (s *Store) Now(context.Context) (time.Time, error) {
	return s.now(), nil
}

// SerialWrites is true: bbolt has one writer.
func (s *Store) SerialWrites() bool { return true }

// Wakeups signals after every committed Update: sends, operator actions,
// queues started.
func (s *Store) Wakeups() <-chan struct{} {
	return s.wake
}

func (s *Store) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Join starts a new epoch for node p.ID and lists the incarnations that
// left messages DLNG.
func (s *Store) Join(ctx context.Context, p store.JoinParams) (*store.Joined, error) {
	var out *store.Joined
	err := s.write(ctx, func(t *txn) error {
		epoch := t.epoch() + 1
		if err := t.bucket(bucketMeta).Put([]byte(keyEpoch), seal([]byte(keyEpoch), binary.BigEndian.AppendUint64(nil, epoch))); err != nil {
			return fmt.Errorf("join: store the epoch: %w", err)
		}
		t.epochValue = epoch
		if err := t.dropCrashes(p.Previous.Incarnation); err != nil {
			return fmt.Errorf("join: %w", err)
		}
		dead, err := t.deadNodes()
		out = &store.Joined{Node: store.Node{ID: p.ID, Incarnation: epoch}, Dead: dead}
		return err
	})
	if err == nil {
		at := s.now()
		s.serving.Store(&store.NodeInfo{ID: p.ID, Incarnation: out.Node.Incarnation, Address: p.Address,
			StartedAt: at, HeartbeatAt: at, Receivers: store.ReceiverList(p.Receivers)})
	}
	return out, err
}

// deadNodes lists the incarnations of the DLNG messages.
func (t *txn) deadNodes() ([]store.Node, error) {
	var dead []store.Node
	seen := map[store.Node]bool{}
	err := t.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}, func(m *domain.Message) error {
		n := store.Node{ID: m.Node, Incarnation: m.Incarnation}
		if !seen[n] {
			seen[n] = true
			dead = append(dead, n)
		}
		return nil
	})
	return dead, err
}

// fenced refuses a write of an incarnation that is not the current one.
func (t *txn) fenced(n store.Node) error {
	if epoch := t.epoch(); n.Incarnation != epoch {
		return fmt.Errorf("node %s incarnation %d, store epoch %d: %w", n.ID, n.Incarnation, epoch, store.ErrFenced)
	}
	return nil
}

// Heartbeat has no other node to tell; it only checks that the node's
// incarnation is still the store's.
func (s *Store) Heartbeat(ctx context.Context, p store.HeartbeatParams) (*store.HeartbeatResult, error) {
	err := s.View(ctx, func(r store.Reader) error { return r.(*txn).fenced(p.Node) })
	if err != nil {
		return nil, err
	}
	if n := s.serving.Load(); n != nil && n.Incarnation == p.Node.Incarnation {
		beat := *n
		beat.HeartbeatAt, beat.InFlight = s.now(), p.InFlight
		s.serving.CompareAndSwap(n, &beat)
	}
	return &store.HeartbeatResult{}, nil
}

// Leave has no lease to give up — the next process to open the file takes
// them all — but hands back what the node still holds DLNG.
func (s *Store) Leave(ctx context.Context, n store.Node) error {
	if cur := s.serving.Load(); cur != nil && cur.Incarnation == n.Incarnation {
		s.serving.CompareAndSwap(cur, nil)
	}
	return s.write(ctx, func(t *txn) error {
		if err := t.fenced(n); err != nil {
			return err
		}
		_, err := t.handBack(n, nil, "handed back: the node stopped")
		return err
	})
}

// Reconcile hands back what the store says the node holds DLNG and the
// node does not know of.
func (s *Store) Reconcile(ctx context.Context, p store.ReconcileParams) (*store.ReconcileResult, error) {
	var out *store.ReconcileResult
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		held, err := t.handBack(p.Node, p.Held, "handed back: the node never started its delivery (the claim's commit was not confirmed)")
		out = &store.ReconcileResult{HandedBack: held}
		return err
	})
	return out, err
}

// handBack hands back the messages DLNG for incarnation n but those of keep.
func (t *txn) handBack(n store.Node, keep []string, reason string) ([]*domain.Message, error) {
	dlng, err := t.dlngOf(n)
	if err != nil {
		return nil, err
	}
	dlng = slices.DeleteFunc(dlng, func(m *domain.Message) bool { return slices.Contains(keep, m.ID) })
	settled, err := store.Settle(t, dlng, func(*domain.Message) store.CrashVerdict { return store.HandBack(reason) }, t.now(), n)
	out := make([]*domain.Message, len(settled))
	for i, s := range settled {
		out[i] = s.Message
	}
	return out, err
}

// Recover runs crash recovery for one dead incarnation (§4).
func (s *Store) Recover(ctx context.Context, p store.RecoverParams) (*store.RecoverResult, error) {
	var out *store.RecoverResult
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		dlng, err := t.dlngOf(p.Dead)
		if err != nil {
			return err
		}
		at := t.now()
		settled, err := store.Settle(t, dlng, func(m *domain.Message) store.CrashVerdict {
			return store.CrashVerdictOf(m, len(dlng), p, !p.Outage)
		}, at, p.Node)
		if err != nil {
			return err
		}
		out = &store.RecoverResult{}
		out.Sort(settled)
		if err := t.keepCrashes(p.Dead, store.CountedCrashes(settled, at)); err != nil {
			return err
		}
		if !p.Outage {
			return nil
		}
		// The dead incarnation's process came back: what an earlier
		// recovery counted against it is taken back.
		counted, err := t.takeCrashes(p.Dead.Incarnation)
		if err != nil {
			return err
		}
		out.TakenBack, err = store.TakeBack(t, p.Dead, counted, at, p.Node)
		return err
	})
	return out, err
}

// dlngOf returns the messages DLNG for incarnation n.
func (t *txn) dlngOf(n store.Node) ([]*domain.Message, error) {
	var dlng []*domain.Message
	err := t.Messages(store.MessageFilter{Statuses: []domain.Status{domain.StatusDLNG}}, func(m *domain.Message) error {
		if m.Node == n.ID && m.Incarnation == n.Incarnation {
			dlng = append(dlng, m)
		}
		return nil
	})
	return dlng, err
}

// idOf is parseID for ids the store wrote itself.
func idOf(id string) uuid.UUID {
	key, _ := parseID(id)
	return key
}
