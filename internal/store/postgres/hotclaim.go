package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/store"
)

// hotClaim is one run of claimSQL: what it was asked, and what it found.
type hotClaim struct {
	p   store.ClaimParams
	res *store.ClaimResult
	// state is the node's (fenceSQL).
	state int
	// routable says an inbound queue the node holds has messages to
	// route; lanes counts the EOIO queues it left to the general claim,
	// whose order rules follow a switch (store.LaneWaits).
	routable bool
	lanes    int64
	// gen is lease_changes as the statement read it.
	gen int64
	// last is the queue of the last message claimed.
	last string
}

// candidateMode is the claim statement's $7 for a claim's CandidateMode:
// CandidatesAlone is the general claim's.
func candidateMode(m store.CandidateMode) int {
	if m == store.CandidatesAsAny {
		return 0
	}
	return 1
}

// queueHotClaim queues on b the claim statement for p, in the turn that
// starts after queue start, the queues of the messages prefer first.
func queueHotClaim(b *pgx.Batch, p store.ClaimParams, start string, prefer []pgtype.UUID) *hotClaim {
	h := &hotClaim{p: p, res: &store.ClaimResult{}}
	if prefer == nil {
		prefer = []pgtype.UUID{}
	}
	window := max(p.Window, 1)
	b.Queue(claimSQL, int64(p.Node.Incarnation), clean(p.Node.ID), p.Receivers, window, max(p.Limit, 0), start,
		candidateMode(p.Candidates), prefer).Query(h.scan)
	return h
}

// scan reads the statement's rows: the summary's columns on each, and a
// message claimed on each but when it claimed none.
func (h *hotClaim) scan(rows pgx.Rows) error {
	defer rows.Close()
	const summary = 8
	for rows.Next() {
		var (
			now       time.Time
			more      bool
			candidate int64
			nextDue   pgtype.Timestamptz
			epoch     int64
			data      []byte
			ms        messageScan
		)
		dest := []any{&h.state, &now, &candidate, &more, &nextDue, &h.routable, &h.lanes, &h.gen}
		if rows.RawValues()[summary] == nil {
			// No message: the summary alone.
			dest = append(dest, make([]any, messageColumnCount+2)...)
		} else {
			dest = append(append(dest, ms.dest()...), &epoch, &data)
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		h.res.Now, h.res.More, h.res.Candidates = now.UTC(), more, int(candidate)
		if nextDue.Valid {
			h.res.NextDue = nextDue.Time.UTC()
		}
		if rows.RawValues()[summary] == nil {
			continue
		}
		m := ms.message()
		if data == nil {
			data = []byte{}
		}
		h.res.Claimed = append(h.res.Claimed, store.Claimed{Message: m.Message, Epoch: uint64(epoch), Payload: data})
		h.last = m.Queue
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	return nil
}

// done reports, once the statement ran, a node that may not claim.
func (h *hotClaim) done() error {
	return fenceError(h.p.Node, h.state)
}

// hotBatch runs, on a connection of the engine's pool, the statements that
// queue puts on a batch — as one implicit transaction, in one round trip —
// and then the function it returns; after a deadlock or a serialization
// failure it runs them again. Commits counts it.
func (s *Store) hotBatch(ctx context.Context, queue func(b *pgx.Batch) func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.retrying(ctx, func() error {
		b := &pgx.Batch{}
		done := queue(b)
		if err := s.hot.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		return done()
	})
}

// Leases free to take (§11): a claim looks for them — which costs the
// shares of the whole cluster — only when lease_changes moved since it
// last looked. The heartbeat balances the leases in any case.

// adoptDue says whether the next claim looks for free leases.
func (s *Store) adoptDue() bool {
	return s.leasesSeen.Load() != s.leasesAdopted.Load()
}

// sawLeases notes lease_changes as a claim read it; adopted says the
// claim looked for free leases before it read it.
func (s *Store) sawLeases(gen int64, adopted bool) {
	if adopted {
		s.leasesAdopted.Store(gen)
	}
	s.leasesSeen.Store(gen)
}
