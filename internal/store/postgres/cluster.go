package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
)

// The cluster (§11): nodes, their liveness and the leases of queues.
//
// A node's incarnation is a row of nodes, alive while it has neither left
// (stopped_at) nor been recovered (recovered_at) and its expires_at — the
// database's time of its last heartbeat plus its TTL — lies ahead. Every
// engine write first checks that its incarnation is alive (fence), so a
// node declared dead changes nothing, and learns it from the error.
//
// Each queue has one lease row, created with the queue, free. A node holds
// a lease while the row names its incarnation, its expires_at is
// 'infinity' and the incarnation is alive; a node that takes a lease —
// free ('-infinity'), or whose holder is dead — increments its epoch, and
// every outcome compares the epoch it was claimed under. Claims and
// outcomes hold their leases' rows FOR SHARE until they commit; a node that
// gives a queue up locks the row first and gives up only queues in which it
// has nothing DLNG. So a handover never lets two nodes deliver one message:
// what the old holder claimed it records itself, under the epoch that is
// still the queue's, and the new holder claims only what is TBDL.
//
// Balancing counts work, not only queues: a heartbeat computes two fair
// shares, of the queues with work and of all queues — ceil(queues / live
// nodes) when every node may hold every queue; placement.go weighs them by
// the receivers each node has — where a queue has work while it has open
// messages (TBDL, DLNG, WAIT, HOLD, NDLV, from the counters of its queues
// row). A node holds only queues it may deliver (placement.go). Below its share
// of queues with work, a node takes free ones with work and those of dead
// nodes; below its share of all queues, free ones without work. Over its
// share of queues with work, it hands the surplus over in two phases: it
// marks the leases releasing — its claims take nothing new from a
// releasing queue, while what it has DLNG there is recorded under the
// epoch that is still the queue's — and frees a releasing lease at a
// heartbeat (this one or a later one) at which it has nothing of the queue
// DLNG; the node that takes it increments the epoch and claims only TBDL.
// Over its share of all queues, it frees queues without work at once. A
// claim, too, takes free queues while its node is below its shares, those
// with work first, so that a new queue (or one given up) waits for no
// heartbeat; the commit that frees a queue notifies the nodes, whose next
// claim takes it.
//
// A heartbeat waits for no other node for long: its statements run under
// a lock_timeout, and a node frozen inside a transaction has its session
// ended by the server (idle_in_transaction_session_timeout, Options.LeaseTTL
// / 4), which frees its row locks long before its lease expires.

// defaultTTL is the TTL of a node that joins without one (cluster.lease_ttl).
const defaultTTL = 10 * time.Second

// unended is the condition on a row of nodes (n) that the incarnation has
// neither left, nor been declared dead (fenced), nor been recovered: it is
// alive, or overdue and may revive with its next heartbeat.
const unended = `n.stopped_at IS NULL AND n.recovered_at IS NULL AND n.fenced_at IS NULL`

// alive is the condition on a row of nodes (n) that the incarnation is alive.
const alive = unended + ` AND n.expires_at > now()`

// microseconds turns a duration into the parameter of $n * interval '1 microsecond'.
func microseconds(d time.Duration) int64 { return d.Microseconds() }

// fenceSQL returns the state of incarnation $1: 0 alive, 1 overdue (its
// heartbeat lapsed, nobody declared it dead yet), 2 over.
const fenceSQL = `SELECT coalesce((SELECT CASE WHEN ` + alive + ` THEN 0 WHEN ` + unended + ` THEN 1 ELSE 2 END
	FROM nodes n WHERE n.incarnation = $1), 2)`

// queueFence queues the check that node n is alive on b; the returned
// function reports the result once b ran: ErrOverdue for a node whose
// heartbeat lapsed, ErrFenced for one whose incarnation is over.
func queueFence(b *pgx.Batch, n store.Node) func() error {
	var state int
	b.Queue(fenceSQL, int64(n.Incarnation)).QueryRow(func(row pgx.Row) error { return row.Scan(&state) })
	return func() error { return fenceError(n, state) }
}

// fenceError is what a state of fenceSQL means for node n's writes.
func fenceError(n store.Node, state int) error {
	switch state {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("node %s incarnation %d changes nothing until a heartbeat renews it: %w", n.ID,
			n.Incarnation, store.ErrOverdue)
	}
	return fenced(n)
}

func fenced(n store.Node) error {
	return fmt.Errorf("node %s incarnation %d is no longer alive (it left, or was declared dead): %w", n.ID, n.Incarnation, store.ErrFenced)
}

// fence refuses the writes of a node that is not alive.
func (t *txn) fence(n store.Node) error {
	b := &pgx.Batch{}
	check := queueFence(b, n)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	return check()
}

// Now returns the database's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return time.Time{}, s.dbError(err)
	}
	return now.UTC(), nil
}

// Join inserts a new incarnation of node p.ID, supersedes its earlier
// incarnations (a restarted node's predecessor is dead) and frees their
// leases, takes the node's share of the queues and lists the incarnations
// that died unrecovered. An earlier incarnation that still heartbeats is
// another live process with the same id: Join refuses to start beside it.
func (s *Store) Join(ctx context.Context, p store.JoinParams) (*store.Joined, error) {
	ttl := p.TTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	every := p.Heartbeat
	if every <= 0 {
		every = time.Second
	}
	if err := s.watchNamesake(ctx, p.ID); err != nil {
		return nil, err
	}
	var out *store.Joined
	var gained bool
	err := s.engine(ctx, func(t *txn) error {
		n := store.Node{ID: p.ID}
		err := t.tx.QueryRow(t.ctx, `INSERT INTO nodes (id, address, expires_at, heartbeat_every, receivers)
			VALUES ($1, $2, now() + $3 * interval '1 microsecond', $4 * interval '1 microsecond', $5) RETURNING incarnation`,
			clean(p.ID), clean(p.Address), microseconds(ttl), microseconds(every), store.ReceiverList(p.Receivers)).Scan(&n.Incarnation)
		if err != nil {
			return fmt.Errorf("join node %s: %w", p.ID, err)
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE nodes n SET fenced_at = now() WHERE id = $1 AND incarnation < $2 AND `+unended,
			clean(p.ID), int64(n.Incarnation))
		// The crashes counted against the id's earlier incarnations stand
		// (their processes died), but for those of the one this process
		// ran before, which its recovery takes back.
		b.Queue(`DELETE FROM counted_crashes WHERE incarnation <> $3
			AND incarnation IN (SELECT incarnation FROM nodes WHERE id = $1 AND incarnation < $2)`,
			clean(p.ID), int64(n.Incarnation), int64(p.Previous.Incarnation))
		b.Queue(forgetCrashesGone)
		var freed int64
		b.Queue(`WITH f AS (UPDATE leases SET expires_at = '-infinity'
				WHERE incarnation IN (SELECT incarnation FROM nodes WHERE id = $1 AND incarnation < $2)
				AND expires_at > '-infinity' RETURNING 1)
			SELECT count(*) FROM f`, clean(p.ID), int64(n.Incarnation)).QueryRow(func(row pgx.Row) error { return row.Scan(&freed) })
		if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
			return fmt.Errorf("join node %s: %w", p.ID, err)
		}
		t.wake = t.wake || freed > 0
		dead, err := t.dead(n)
		if err != nil {
			return err
		}
		took, err := t.balance(n)
		if err != nil {
			return err
		}
		gained = took > 0
		out = &store.Joined{Node: n, Dead: dead}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if gained {
		s.signal()
	}
	return out, nil
}

// watchNamesake refuses to start an incarnation of node id beside a live
// one: an earlier incarnation that looks alive is watched for a few of its
// heartbeats. One that heartbeats is another process (exit 2, naming its
// address); one that does not died, and the new incarnation supersedes it.
func (s *Store) watchNamesake(ctx context.Context, id string) error {
	var inc int64
	var address string
	var beat time.Time
	var every time.Duration
	err := s.pool.QueryRow(ctx, `SELECT incarnation, address, heartbeat_at, heartbeat_every FROM nodes n
		WHERE id = $1 AND `+alive+` ORDER BY incarnation DESC LIMIT 1`, clean(id)).Scan(&inc, &address, &beat, &every)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return s.dbError(err)
	}
	// Three of its heartbeats, and a little for a slow database.
	deadline := time.NewTimer(3*every + 250*time.Millisecond)
	defer deadline.Stop()
	look := time.NewTicker(max(every/4, 10*time.Millisecond))
	defer look.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-look.C:
		}
		var seen time.Time
		var live bool
		err := s.pool.QueryRow(ctx, `SELECT heartbeat_at, `+alive+` FROM nodes n WHERE incarnation = $1`, inc).Scan(&seen, &live)
		if err != nil {
			return s.dbError(err)
		}
		if !live {
			return nil
		}
		if !seen.Equal(beat) {
			if address == "" {
				address = "an unknown address"
			}
			return domain.WithHint(domain.ErrInvalid,
				fmt.Sprintf("node id %s is in use: a live node with this id (incarnation %d) serves at %s", id, inc, address),
				"start this node with another --node-id (or engine.node_id), or stop the other one first")
		}
	}
}

// fenceDeadSQL declares dead, for incarnation $1, the incarnations whose
// heartbeat expired while it was alive — or, after an outage it suffered
// too, that did not come back within its TTL of its own return — and lists
// those declared dead that were not recovered. An incarnation declared dead
// (fenced) never revives; its leases may be taken at once.
const fenceDeadSQL = `UPDATE nodes d SET fenced_at = now() FROM nodes l
	WHERE l.incarnation = $1 AND d.incarnation <> $1 AND d.stopped_at IS NULL AND d.recovered_at IS NULL
		AND d.fenced_at IS NULL AND d.expires_at <= now()
		AND (d.expires_at >= coalesce(l.revived_at, l.started_at)
			OR coalesce(l.revived_at, l.started_at) + (l.expires_at - l.heartbeat_at) <= now())`

// dead declares dead the incarnations whose heartbeat expired (fenceDeadSQL)
// and lists those declared dead — their heartbeat expired, or a restart
// superseded them — that were not recovered.
func (t *txn) dead(lister store.Node) ([]store.Node, error) {
	tag, err := t.tx.Exec(t.ctx, fenceDeadSQL, int64(lister.Incarnation))
	if err != nil {
		return nil, fmt.Errorf("dead nodes: %w", err)
	}
	if tag.RowsAffected() > 0 {
		// The leases of a node declared dead are free to take: the
		// claims of the other nodes look for them (lease_changes).
		if _, err := t.tx.Exec(t.ctx, `SELECT nextval('lease_changes')`); err != nil {
			return nil, fmt.Errorf("dead nodes: %w", err)
		}
	}
	rows, err := t.tx.Query(t.ctx, `SELECT id, incarnation FROM nodes n
		WHERE n.stopped_at IS NULL AND n.recovered_at IS NULL AND n.fenced_at IS NOT NULL ORDER BY incarnation`)
	if err != nil {
		return nil, fmt.Errorf("dead nodes: %w", err)
	}
	var dead []store.Node
	var n store.Node
	_, err = pgx.ForEachRow(rows, []any{&n.ID, &n.Incarnation}, func() error {
		dead = append(dead, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dead nodes: %w", err)
	}
	return dead, nil
}

// Heartbeat renews the node's liveness (and with it its leases) — reviving
// it when its heartbeat was overdue and nobody declared it dead — declares
// dead the nodes whose heartbeat lapsed, balances the queues and lists the
// dead incarnations.
func (s *Store) Heartbeat(ctx context.Context, p store.HeartbeatParams) (*store.HeartbeatResult, error) {
	ttl := p.TTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	var out *store.HeartbeatResult
	var gained bool
	err := s.engine(ctx, func(t *txn) error {
		// A heartbeat waits for no other node for long: a lock held by a
		// node frozen inside its transaction (its session ends after
		// Options.LeaseTTL/4) fails this heartbeat, and the next tries
		// again, well within the TTL.
		if _, err := t.tx.Exec(t.ctx, `SELECT set_config('lock_timeout', $1, true)`,
			fmt.Sprint(idleInTransaction(ttl).Milliseconds())); err != nil {
			return fmt.Errorf("heartbeat of node %s: %w", p.Node.ID, err)
		}
		out = &store.HeartbeatResult{}
		// An overdue node that revives keeps the window it could not
		// reach the database in (gap_from to revived_at): see fenceDeadSQL
		// and Recover.
		err := t.tx.QueryRow(t.ctx, `UPDATE nodes n SET heartbeat_at = now(), expires_at = now() + $2 * interval '1 microsecond',
				in_flight = $3,
				revived_at = CASE WHEN n.expires_at <= now() THEN now() ELSE n.revived_at END,
				gap_from = CASE WHEN n.expires_at <= now() THEN n.heartbeat_at ELSE n.gap_from END
			WHERE incarnation = $1 AND `+unended+` RETURNING coalesce(n.revived_at = now(), false)`,
			int64(p.Node.Incarnation), microseconds(ttl), p.InFlight).Scan(&out.Revived)
		if errors.Is(err, pgx.ErrNoRows) {
			return fenced(p.Node)
		}
		if err != nil {
			return fmt.Errorf("heartbeat of node %s: %w", p.Node.ID, err)
		}
		if out.Dead, err = t.dead(p.Node); err != nil {
			return err
		}
		if !p.Stopping {
			took, err := t.balance(p.Node)
			if err != nil {
				return err
			}
			gained = took > 0
		}
		return t.tx.QueryRow(t.ctx, `SELECT count(*) FROM leases WHERE incarnation = $1 AND expires_at > now()`,
			int64(p.Node.Incarnation)).Scan(&out.Queues)
	})
	if err != nil {
		return nil, err
	}
	if gained {
		s.signal() // a lease gained: its queue may have messages ready
	}
	return out, nil
}

// Leave ends an incarnation that stopped cleanly, frees its leases and hands
// back what it still holds DLNG.
func (s *Store) Leave(ctx context.Context, n store.Node) error {
	return s.engine(ctx, func(t *txn) error {
		tag, err := t.tx.Exec(t.ctx, `UPDATE nodes n SET stopped_at = now() WHERE incarnation = $1 AND `+unended, int64(n.Incarnation))
		if err != nil {
			return fmt.Errorf("node %s leaves: %w", n.ID, err)
		}
		if tag.RowsAffected() == 0 {
			return fenced(n)
		}
		if _, err := t.tx.Exec(t.ctx, `UPDATE leases SET expires_at = '-infinity' WHERE incarnation = $1 AND expires_at > now()`,
			int64(n.Incarnation)); err != nil {
			return fmt.Errorf("node %s leaves: %w", n.ID, err)
		}
		t.wake = true
		_, err = t.settleDLNG(n, n, nil, func(*domain.Message) store.CrashVerdict {
			return store.HandBack("handed back: the node stopped")
		})
		return err
	})
}

// Reconcile hands back what the store says the node holds DLNG and the node
// does not know of.
func (s *Store) Reconcile(ctx context.Context, p store.ReconcileParams) (*store.ReconcileResult, error) {
	out := &store.ReconcileResult{}
	err := s.engine(ctx, func(t *txn) error {
		if err := t.fence(p.Node); err != nil {
			return err
		}
		settled, err := t.settleDLNG(p.Node, p.Node, p.Held, func(*domain.Message) store.CrashVerdict {
			return store.HandBack("handed back: the node never started its delivery (the claim's commit was not confirmed)")
		})
		out.HandedBack = out.HandedBack[:0]
		for _, s := range settled {
			out.HandedBack = append(out.HandedBack, s.Message)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Recover runs crash recovery (§4) for one dead incarnation, once: the
// conditional update of its row lets one of two racing nodes recover it,
// the other waits for its commit and finds it recovered. It counts no
// crash when the recovering node itself could not reach the database when
// the dead one last heartbeat (both suffered one outage), or when the
// caller says the dead incarnation's process lives on (p.Outage).
func (s *Store) Recover(ctx context.Context, p store.RecoverParams) (*store.RecoverResult, error) {
	var out *store.RecoverResult
	err := s.engine(ctx, func(t *txn) error {
		out = &store.RecoverResult{}
		if err := t.fence(p.Node); err != nil {
			return err
		}
		dead := int64(p.Dead.Incarnation)
		var shared bool
		err := t.tx.QueryRow(t.ctx, `UPDATE nodes d SET recovered_at = now(), recovered_by = $2,
				fenced_at = coalesce(d.fenced_at, now())
			FROM nodes l
			WHERE d.incarnation = $1 AND l.incarnation = $2 AND d.stopped_at IS NULL AND d.recovered_at IS NULL
				AND (d.fenced_at IS NOT NULL OR d.expires_at <= now())
			RETURNING coalesce(l.revived_at IS NOT NULL AND d.heartbeat_at >= l.gap_from - 2 * l.heartbeat_every
				AND d.heartbeat_at <= l.revived_at, false)`, dead, int64(p.Node.Incarnation)).Scan(&shared)
		if errors.Is(err, pgx.ErrNoRows) {
			// Alive, left cleanly, or recovered already — by another
			// node, which counted crashes that are taken back when the
			// dead incarnation's process came back.
			return t.takeBack(p, out)
		}
		if err != nil {
			return fmt.Errorf("recover node %s: %w", p.Dead.ID, err)
		}
		if _, err := t.tx.Exec(t.ctx, `UPDATE leases SET expires_at = '-infinity' WHERE incarnation = $1 AND expires_at > now()`,
			dead); err != nil {
			return fmt.Errorf("recover node %s: %w", p.Dead.ID, err)
		}
		t.wake = true
		counted := !p.Outage && !shared
		var inFlight int
		settled, err := t.settleDLNG(p.Dead, p.Node, nil, func(m *domain.Message) store.CrashVerdict {
			return store.CrashVerdictOf(m, inFlight, p, counted)
		}, func(n int) { inFlight = n })
		if err != nil {
			return err
		}
		out.Sort(settled)
		if len(settled) > 0 {
			at, err := t.now()
			if err != nil {
				return err
			}
			if err := t.keepCrashes(p.Dead, store.CountedCrashes(settled, at)); err != nil {
				return err
			}
		}
		return t.takeBack(p, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// forgetCrashesGone deletes the records of counted crashes that nothing can
// take back any more: their message was purged, or has no crash left. A
// node whose id never joins again (the default id changes at every start)
// leaves its records behind otherwise. Joins and recoveries run it; both
// are rare, and the table is small.
const forgetCrashesGone = `DELETE FROM counted_crashes c WHERE NOT EXISTS
	(SELECT 1 FROM messages m WHERE m.id = c.message AND m.crashes > 0)`

// keepCrashes records the crashes a recovery counted against incarnation dead.
func (t *txn) keepCrashes(dead store.Node, crashes []store.CountedCrash) error {
	if len(crashes) == 0 {
		return nil
	}
	ids, counts, ats := make([]pgtype.UUID, len(crashes)), make([]int32, len(crashes)), make([]time.Time, len(crashes))
	for i, c := range crashes {
		ids[i], _ = parseID(c.ID)
		counts[i], ats[i] = int32(c.Crash), c.At
	}
	if _, err := t.tx.Exec(t.ctx, `INSERT INTO counted_crashes (incarnation, message, crash, counted_at)
		SELECT $1, u.id, u.crash, u.at FROM unnest($2::uuid[], $3::integer[], $4::timestamptz[]) AS u(id, crash, at)
		ON CONFLICT (incarnation, message) DO UPDATE SET crash = excluded.crash, counted_at = excluded.counted_at`,
		int64(dead.Incarnation), ids, counts, ats); err != nil {
		return fmt.Errorf("recover node %s: record the crashes counted: %w", dead.ID, err)
	}
	if _, err := t.tx.Exec(t.ctx, forgetCrashesGone); err != nil {
		return fmt.Errorf("recover node %s: forget the crashes of messages gone: %w", dead.ID, err)
	}
	return nil
}

// takeBack takes back, when the dead incarnation's process came back
// (p.Outage), the crashes an earlier recovery counted against it.
func (t *txn) takeBack(p store.RecoverParams, out *store.RecoverResult) error {
	if !p.Outage {
		return nil
	}
	rows, err := t.tx.Query(t.ctx, `DELETE FROM counted_crashes WHERE incarnation = $1
		RETURNING message::text, crash, counted_at`, int64(p.Dead.Incarnation))
	if err != nil {
		return fmt.Errorf("take back the crashes of node %s: %w", p.Dead.ID, err)
	}
	var crashes []store.CountedCrash
	var c store.CountedCrash
	if _, err := pgx.ForEachRow(rows, []any{&c.ID, &c.Crash, &c.At}, func() error {
		c.At = c.At.UTC()
		crashes = append(crashes, c)
		return nil
	}); err != nil {
		return fmt.Errorf("take back the crashes of node %s: %w", p.Dead.ID, err)
	}
	if len(crashes) == 0 {
		return nil
	}
	at, err := t.now()
	if err != nil {
		return err
	}
	out.TakenBack, err = store.TakeBack(t, p.Dead, crashes, at, p.Node)
	t.wake = t.wake || len(out.TakenBack) > 0 // a message no longer blacklisted is ready
	return err
}

// settleDLNG applies a verdict to each message DLNG for incarnation n but
// those of keep (store.Settle), in history entries of node by: their
// queues locked first, in name order, then the messages read under the
// locks. count, if given, hears how many there are before the first verdict.
func (t *txn) settleDLNG(n, by store.Node, keep []string, verdict func(*domain.Message) store.CrashVerdict,
	count ...func(int)) ([]store.Settled, error) {
	inc := int64(n.Incarnation)
	if keep == nil {
		keep = []string{}
	}
	queues, err := t.strings(`SELECT DISTINCT queue FROM messages WHERE status = 'DLNG' AND incarnation = $1
		AND NOT (id::text = ANY($2)) ORDER BY queue`, inc, keep)
	if err != nil || len(queues) == 0 {
		return nil, err
	}
	if err := t.lockQueues(queues); err != nil {
		return nil, err
	}
	dlng, err := t.messages(`SELECT `+messageColumns+` FROM messages WHERE status = 'DLNG' AND incarnation = $1
		AND NOT (id::text = ANY($2)) ORDER BY queue, seq`, inc, keep)
	if err != nil {
		return nil, fmt.Errorf("messages DLNG for node %s: %w", n.ID, err)
	}
	for _, c := range count {
		c(len(dlng))
	}
	at, err := t.now()
	if err != nil {
		return nil, err
	}
	return store.Settle(t, dlng, verdict, at, by)
}

// strings runs a query that returns one text column.
func (t *txn) strings(sql string, args ...any) ([]string, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// divert moves a failed EOIO message, and its lane after it, to its error
// queue when §10 says so, and returns the message as stored after.
func (t *txn) divert(m *domain.Message, h domain.HistoryEntry) (*domain.Message, error) {
	errorQueue, err := store.Divert(t, m, h)
	if err != nil || errorQueue == "" {
		return m, err
	}
	return t.Message(m.ID)
}

// lockQueues reads the queues this transaction has not read yet, locking
// those that lockQueue locks, in one round trip, and keeps their records.
func (t *txn) lockQueues(names []string) error {
	var todo []string
	for _, name := range names {
		if _, ok := t.queues[name]; !ok {
			todo = append(todo, name)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	t.queueQueues(b, `q.name = ANY($1)`, []any{todo}, nil)
	if err := t.tx.SendBatch(t.ctx, b).Close(); err != nil {
		return fmt.Errorf("lock queues: %w", err)
	}
	return nil
}
