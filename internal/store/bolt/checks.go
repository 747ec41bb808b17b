package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	bbolt "go.etcd.io/bbolt"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The embedded store's side of store.CheckStore: the check-back of
// transactional sends (§9). The checks bucket holds every PEND message that
// is not stuck by when its wait began, so a claim reads the due ones and
// stops at the first that is not. The one process that holds the file holds
// every queue, so it checks every queue.

// ClaimChecks marks the PEND messages that are due for a check-back.
func (s *Store) ClaimChecks(ctx context.Context, p store.ClaimChecksParams) (*store.ClaimChecksResult, error) {
	var out *store.ClaimChecksResult
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		var err error
		out, err = t.claimChecks(p)
		return err
	})
	return out, err
}

func (t *txn) claimChecks(p store.ClaimChecksParams) (*store.ClaimChecksResult, error) {
	now := t.now()
	out := &store.ClaimChecksResult{Claimed: []*domain.Message{}}
	var due []uuid.UUID
	c := t.bucket(bucketChecks).Cursor()
	for _, r := range []struct {
		kind byte
		wait time.Duration
	}{{checkKindPrepared, p.After}, {checkKindChecked, p.Interval}} {
		for k, _ := c.Seek([]byte{r.kind}); k != nil && k[0] == r.kind; k, _ = c.Next() {
			if len(k) != 1+8+16 {
				return nil, fmt.Errorf("checks index: key %x is malformed", k)
			}
			at := time.UnixMicro(int64(binary.BigEndian.Uint64(k[1:9]))).UTC().Add(r.wait)
			if at.After(now) {
				if out.NextDue.IsZero() || at.Before(out.NextDue) {
					out.NextDue = at
				}
				break
			}
			if p.Limit > 0 && len(due) == p.Limit {
				out.More = true
				break
			}
			due = append(due, uuid.UUID(k[9:]))
		}
	}
	// The claim is the check's time: it moves the message's key from
	// where it waited to where it waits for the next check.
	for _, key := range due {
		cur, err := t.stored(key)
		if err != nil {
			return nil, corrupt("checks index names a missing message: %v", err)
		}
		if cur.Status != domain.StatusPEND || cur.Stuck {
			return nil, corrupt("checks index names message %s, which is %s (stuck: %t)", cur.ID, cur.Status, cur.Stuck)
		}
		next := cur.Clone()
		next.LastCheckAt = &now
		if err := t.putMessage(key, next, cur.form); err != nil {
			return nil, err
		}
		if err := t.reindex(key, cur.Message, next); err != nil {
			return nil, err
		}
		out.Claimed = append(out.Claimed, next)
	}
	if len(out.Claimed) > 0 && (out.NextDue.IsZero() || now.Add(p.Interval).Before(out.NextDue)) {
		out.NextDue = now.Add(p.Interval) // the next check of those claimed
	}
	return out, nil
}

// RecordChecks applies check-back outcomes (store.RecordCheck), and wakes
// delivery when one committed a message.
func (s *Store) RecordChecks(ctx context.Context, p store.RecordChecksParams) (*store.RecordChecksResult, error) {
	var out *store.RecordChecksResult
	err := s.write(ctx, func(t *txn) error {
		if err := t.fenced(p.Node); err != nil {
			return err
		}
		out = &store.RecordChecksResult{Applied: make([]*domain.Message, len(p.Outcomes))}
		at := t.now()
		for i, o := range p.Outcomes {
			m, err := store.RecordCheck(t, p, o, at)
			if errors.Is(err, domain.ErrConflict) {
				if out.Conflicts == nil {
					out.Conflicts = map[string]error{}
				}
				out.Conflicts[o.ID] = err
				continue
			}
			if err != nil {
				return err
			}
			out.Applied[i] = m
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, m := range out.Applied {
		if m != nil && p.Outcomes[i].Kind == store.CheckCommit {
			s.notify()
			break
		}
	}
	return out, nil
}

// indexPrepared puts the PEND messages of a store written before the
// checks index existed into it.
func indexPrepared(tx *bbolt.Tx) error {
	t := &txn{tx: tx, legacy: true}
	prefix := statusKey(domain.StatusPEND, uuid.UUID{})[:1]
	var keys []uuid.UUID
	c := t.bucket(bucketStatus).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		key, err := storedID(k[1:], "an entry of the status index")
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	for _, key := range keys {
		m, err := t.stored(key)
		if err != nil {
			return fmt.Errorf("index prepared messages: %w", err)
		}
		if err := t.bucket(bucketChecks).Put(checkKey(m.Message, key), []byte{}); err != nil {
			return fmt.Errorf("index prepared message %s: %w", m.ID, err)
		}
	}
	return nil
}
