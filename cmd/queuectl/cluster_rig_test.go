//go:build unix

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/postgres"
	"github.com/queuectl/queuectl/internal/store/postgres/pgtest"
)

// The cluster tests (§11) run several real `queuectl serve` processes on one
// PostgreSQL schema, each a node with an id of its own, and kill, stop and
// pause them. They use the serve rig: one receiver script, whose reports
// name the serve process that ran it ($PPID), so the test knows which node
// delivered what. Besides the receiver's reports, the test waits on the
// database itself: a trigger of the test's own notifies it whenever the
// messages table changes, so that a test waits for a state of the store
// (everything delivered, a message blacklisted) without polling or sleeping.

// Cluster timing of the tests: short, so that a dead node's queues move
// within seconds.
const (
	clusterHeartbeat = 200 * time.Millisecond
	clusterLeaseTTL  = 2 * time.Second
)

// cluster is a rig on a PostgreSQL schema of the test's own, and the nodes
// started on it.
type cluster struct {
	*rig
	db      *pgxpool.Pool // queries of the test
	changed chan struct{}
	nodes   []*node
	// waiting says what the test waits for, for its failure message.
	waiting string
}

// node is one serve process of the cluster.
type node struct {
	*generation
	id string
	// mayExit is set once the test killed, stopped or fenced the node:
	// until then, an exit of the node fails the test.
	mayExit bool
	// fenced is set when the node lost its leases while it was paused:
	// it may stop with an error by itself, or at SIGTERM.
	fenced bool
}

// newCluster makes a rig on a new, migrated schema, with the cluster
// timing above, and starts listening for changes of the store.
func newCluster(t *testing.T, o rigOptions) *cluster {
	return newClusterOn(t, o, pgtest.URL(t)) // skips the test without PostgreSQL
}

// newClusterOn makes a rig on the database url, migrated, with the cluster
// timing above, and starts listening for changes of the store. The test's
// connections come back after the database restarts.
func newClusterOn(t *testing.T, o rigOptions, url string) *cluster {
	o.store, o.heartbeat, o.leaseTTL = url, clusterHeartbeat, clusterLeaseTTL
	c := &cluster{rig: newRig(t, o), changed: make(chan struct{}, 1)}
	c.queuectl("", "migrate")

	ctx := context.Background()
	var err error
	c.db, err = pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(c.db.Close)
	var schema string
	require.NoError(t, c.db.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema))
	channel := schema + "_changed"
	// A statement trigger: one notification per changing statement, and
	// PostgreSQL folds those of one transaction into one.
	_, err = c.db.Exec(ctx, fmt.Sprintf(`
CREATE FUNCTION test_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify(%[1]s, '');
	RETURN NULL;
END $$;
CREATE TRIGGER test_changed AFTER INSERT OR UPDATE OR DELETE ON messages
	FOR EACH STATEMENT EXECUTE FUNCTION test_notify_changed();`, quoteLiteral(channel)))
	require.NoError(t, err)

	lctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	listening := make(chan error, 1)
	go func() {
		defer close(stopped)
		first := true
		for lctx.Err() == nil {
			err := c.listen(lctx, url, channel, func() {
				if first {
					first = false
					listening <- nil
				}
			})
			if first {
				listening <- err
				return
			}
			// The database went away: listen again once it is back,
			// and look again at what the test waits for.
			select {
			case <-lctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	require.NoError(t, <-listening)
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return c
}

// listen passes the notifications of channel on as changes until the
// connection fails or ctx ends; ready is called once it listens. Each
// (re)connection counts as a change: what happened meanwhile is unknown.
func (c *cluster) listen(ctx context.Context, url, channel string, ready func()) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	ready()
	for {
		select {
		case c.changed <- struct{}{}:
		default:
		}
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
	}
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// start starts a node with this id; it listens on a free loopback port.
func (c *cluster) start(id string) *node {
	c.t.Helper()
	n := &node{generation: c.rig.start(nil, "--node-id", id, "--listen", "127.0.0.1:0"), id: id}
	c.nodes = append(c.nodes, n)
	return n
}

// nodeOf is the node whose serve ran a delivery, or nil.
func (c *cluster) nodeOf(d delivery) *node {
	for _, n := range c.nodes {
		if n.pid == d.serve {
			return n
		}
	}
	return nil
}

// running reports whether every node has joined the cluster and runs its
// engine.
func (c *cluster) running() bool {
	return !slices.ContainsFunc(c.nodes, func(n *node) bool { return !n.logged("engine started") })
}

// clusterHappening is what a cluster test waits for next: a receiver
// report, a change of the store, or a node's log line or exit.
type clusterHappening struct {
	report  *delivery
	changed bool
	// logged says a node logged a line or exited.
	logged bool
}

// next waits for the next happening and accounts for a report. It fails
// the test when a node exits that may not, and when nothing happens for
// waitLimit.
func (c *cluster) next() clusterHappening {
	c.t.Helper()
	limit, why := waitLimit, fmt.Sprintf("nothing happened for %s", waitLimit)
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var h clusterHappening
	select {
	case rep := <-c.reports:
		d, err := parseDelivery(rep)
		require.NoError(c.t, err)
		c.account(d)
		h.report = &d
	case <-c.changed:
		h.changed = true
	case <-c.wake:
		h.logged = true
	case <-timer.C:
		c.t.Fatalf("%s while the test waited for %s\n%s", why, c.waiting, c.describe())
	}
	for _, n := range c.nodes {
		if !n.mayExit && n.status() != "running" {
			c.t.Fatalf("node %s exited by itself: %s, while the test waited for %s\n%s", n.id, n.status(), c.waiting, c.describe())
		}
	}
	return h
}

// describe tells where each node is, for a failing test.
func (c *cluster) describe() string {
	var b strings.Builder
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "node %s (pid %d, %s): %d delivered, %d in flight: %s\n", n.id, n.pid, n.status(),
			len(n.done), len(n.inFlight), strings.Join(slices.Sorted(maps.Keys(n.inFlight)), " "))
	}
	if counts, err := c.statusCounts(); err == nil {
		fmt.Fprintf(&b, "messages by status: %v\n", counts)
	}
	b.WriteString(c.leaseTable())
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "stderr of node %s:\n%s\n", n.id, n.log)
	}
	return b.String()
}

// leaseTable lists the leases with what their queues hold, and the nodes
// table, for a failing test.
func (c *cluster) leaseTable() string {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var b strings.Builder
	rows, err := c.db.Query(ctx, `SELECT l.queue, l.node, l.incarnation, l.epoch, l.expires_at > now(),
		(SELECT string_agg(status || ':' || n, ' ' ORDER BY status) FROM
			(SELECT status, count(*) AS n FROM messages m WHERE m.queue = l.queue GROUP BY status) s)
		FROM leases l ORDER BY l.queue`)
	if err != nil {
		return fmt.Sprintf("leases: %v\n", err)
	}
	var q, node string
	var inc, epoch int64
	var live bool
	var msgs *string
	_, err = pgx.ForEachRow(rows, []any{&q, &node, &inc, &epoch, &live, &msgs}, func() error {
		m := ""
		if msgs != nil {
			m = *msgs
		}
		fmt.Fprintf(&b, "lease %-20s node %s incarnation %d epoch %d live %v: %s\n", q, node, inc, epoch, live, m)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "leases: %v\n", err)
	}
	rows, err = c.db.Query(ctx, `SELECT incarnation, id, now() - heartbeat_at, in_flight, stopped_at IS NOT NULL, recovered_at IS NOT NULL FROM nodes ORDER BY incarnation`)
	if err != nil {
		return b.String() + fmt.Sprintf("nodes: %v\n", err)
	}
	var age time.Duration
	var inFlight int
	var stopped, recovered bool
	_, err = pgx.ForEachRow(rows, []any{&inc, &node, &age, &inFlight, &stopped, &recovered}, func() error {
		fmt.Fprintf(&b, "node %s incarnation %d heartbeat %s ago, in flight %d, stopped %v, recovered %v\n", node, inc, age, inFlight, stopped, recovered)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "nodes: %v\n", err)
	}
	// The sessions of the nodes that wait for a lock, or hold a
	// transaction open, in the whole database (other tests' too).
	rows, err = c.db.Query(ctx, `SELECT pid, application_name, state, coalesce(wait_event_type, ''), coalesce(wait_event, ''),
		coalesce(now() - xact_start, '0'), left(regexp_replace(query, '\s+', ' ', 'g'), 160),
		coalesce((SELECT array_agg(b)::text FROM unnest(pg_blocking_pids(pid)) b), '')
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND (state = 'idle in transaction' OR wait_event_type = 'Lock') ORDER BY pid`)
	if err != nil {
		return b.String() + fmt.Sprintf("sessions: %v\n", err)
	}
	var pid int
	var app, state, waitType, wait, query, blockers string
	_, err = pgx.ForEachRow(rows, []any{&pid, &app, &state, &waitType, &wait, &age, &query, &blockers}, func() error {
		fmt.Fprintf(&b, "session %d %q %s %s/%s for %s, blocked by %s: %s\n", pid, app, state, waitType, wait, age, blockers, query)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&b, "sessions: %v\n", err)
	}
	return b.String()
}

// poke makes the next wait return at once, so that the test looks again at
// what it waits for.
func (c *cluster) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// kill crashes a node: SIGKILL for serve and its receivers at once.
func (c *cluster) kill(n *node) time.Time {
	c.t.Helper()
	n.mayExit = true
	at := time.Now()
	n.kill()
	c.poke()
	return at
}

// reap accounts for a node that died by itself (its receiver killed it):
// it must have died of SIGKILL, and its receivers die with it.
func (c *cluster) reap(n *node) {
	c.t.Helper()
	n.mayExit = true
	n.requireKilled()
	n.killGroup()
}

// stopAll stops the nodes that still run with SIGTERM, all at once, and
// expects clean stops, letting go the deliveries that start meanwhile.
func (c *cluster) stopAll() {
	c.t.Helper()
	var running []*node
	for _, n := range c.nodes {
		if n.status() == "running" {
			running = append(running, n)
		}
	}
	c.stop(running...)
}

// stop stops these nodes with SIGTERM and waits for them to exit 0,
// letting go every delivery that starts or is held meanwhile.
func (c *cluster) stop(nodes ...*node) {
	c.t.Helper()
	for _, n := range nodes {
		n.mayExit = true
		require.NoError(c.t, n.cmd.Process.Signal(syscall.SIGTERM))
		for _, d := range n.inFlight {
			c.release(d)
		}
	}
	for {
		exited := 0
		for _, n := range nodes {
			if n.status() != "running" {
				exited++
			}
		}
		if exited == len(nodes) {
			break
		}
		if d := c.next().report; d != nil && !d.done {
			c.release(*d)
		}
	}
	for _, n := range nodes {
		if n.fenced {
			c.t.Logf("node %s, fenced, stopped: %s", n.id, n.status())
			continue
		}
		require.Equal(c.t, 0, n.exitCode(), "node %s after SIGTERM: %s; stderr:\n%s", n.id, n.status(), n.log)
	}
}

// statusCounts counts the messages of the store by status.
func (c *cluster) statusCounts() (map[domain.Status]int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT status, count(*) FROM messages GROUP BY status`)
	if err != nil {
		return nil, err
	}
	counts := map[domain.Status]int{}
	var s string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&s, &n}, func() error {
		counts[domain.Status(s)] = n
		return nil
	})
	return counts, err
}

// settled reports whether the engine has nothing left to do: no message
// is TBDL, DLNG or WAIT.
func (c *cluster) settled() bool {
	c.t.Helper()
	counts, err := c.statusCounts()
	require.NoError(c.t, err)
	return counts[domain.StatusTBDL]+counts[domain.StatusDLNG]+counts[domain.StatusWAIT]+counts[domain.StatusPEND] == 0
}

// histories returns the status changes of every message, oldest first.
func (c *cluster) histories() map[string][]domain.HistoryEntry {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT id::text, history FROM messages`)
	require.NoError(c.t, err)
	hs := map[string][]domain.HistoryEntry{}
	var id string
	var h []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &h}, func() error {
		var err error
		hs[id], err = postgres.DecodeHistory(h)
		return err
	})
	require.NoError(c.t, err)
	return hs
}

// eoioQueue names the queue of an EOIO delivery the way the test sees it:
// by receiver and app queue, which is what the physical queue is made of.
func eoioQueue(d delivery) string { return d.receiver + "/" + d.appQueue }

// requireFirstCompletionsInOrder checks EOIO order: per receiver and app
// queue, each message was completed by the receiver for the first time
// only after the one sent before it. A redelivery does not count.
func (r *rig) requireFirstCompletionsInOrder(msgs []sendLine) {
	r.t.Helper()
	position := map[string]int{}
	count := map[string]int{}
	for _, m := range msgs {
		if m.AppQueue != "" {
			position[m.Payload] = count[m.AppQueue]
			count[m.AppQueue]++
		}
	}
	seen := map[string]bool{}
	next := map[string]int{}
	for _, d := range r.ledger.order {
		if d.appQueue == "-" || seen[d.key()] {
			continue
		}
		seen[d.key()] = true
		q := eoioQueue(d)
		require.Equal(r.t, next[q], position[d.payload], "%s reached %s out of order; the queue's deliveries:\n%s",
			d.payload, q, r.queueDeliveries(q))
		next[q]++
	}
}

// queueDeliveries lists the deliveries of an EOIO queue (eoioQueue), for a
// failing test: when each started and ended, by which serve process, with
// which attempt.
func (r *rig) queueDeliveries(q string) string {
	var b strings.Builder
	type event struct {
		d    delivery
		what string
	}
	var events []event
	for _, d := range r.ledger.starts {
		if d.appQueue != "-" && eoioQueue(d) == q {
			events = append(events, event{d, "start"})
		}
	}
	for _, d := range r.ledger.order {
		if d.appQueue != "-" && eoioQueue(d) == q {
			events = append(events, event{d, "done "})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.d.at.Compare(b.d.at) })
	for _, e := range events {
		fmt.Fprintf(&b, "%s %s %s attempt %d serve %d message %s\n", e.d.at.Format("15:04:05.000000"), e.what,
			e.d.payload, e.d.attempt, e.d.serve, e.d.id)
	}
	return b.String()
}

// expectedKeys are the keys of the outbound messages of msgs, which name
// their receiver.
func expectedKeys(msgs []sendLine) map[string]bool {
	keys := map[string]bool{}
	for _, m := range msgs {
		keys[key(m.Receiver, m.Payload)] = true
	}
	return keys
}

// mixedLoad is n messages to WMS: every fourth EO, the others EOIO over
// appQueues app queues, in turn.
func mixedLoad(n, appQueues int) []sendLine {
	var msgs []sendLine
	for i := range n {
		m := sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: fmt.Sprintf("m%04d", i)}
		if i%4 != 0 {
			m.QoS, m.AppQueue = "EOIO", fmt.Sprintf("Q%02d", i%appQueues)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// requireOneDLVD checks that no node ever completed a message twice in
// the store: one entry into DLVD in each message's history at most. (An
// entry that leaves a DLVD message DLVD — a crash taken back — completes
// nothing.)
func requireOneDLVD(t *testing.T, hs map[string][]domain.HistoryEntry) {
	t.Helper()
	for id, h := range hs {
		n := 0
		for _, e := range h {
			if e.To == domain.StatusDLVD && e.From != domain.StatusDLVD {
				n++
			}
		}
		require.LessOrEqual(t, n, 1, "message %s was recorded DLVD %d times: %v", id, n, h)
	}
}

// crashedOn names, for each time a message went back from DLNG to TBDL by
// crash recovery, the node that had claimed it.
func crashedOn(h []domain.HistoryEntry) []string {
	var nodes []string
	for i, e := range h {
		if i > 0 && e.From == domain.StatusDLNG && e.To == domain.StatusTBDL && h[i-1].To == domain.StatusDLNG {
			nodes = append(nodes, h[i-1].Node)
		}
	}
	return nodes
}

// incarnationStart is when, on the database's clock, the latest
// incarnation of node id started.
func (c *cluster) incarnationStart(id string) time.Time {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var at time.Time
	require.NoError(c.t, c.db.QueryRow(ctx, `SELECT max(started_at) FROM nodes WHERE id = $1`, id).Scan(&at))
	return at
}

// claimedAt is when, on the database's clock, the delivery attempt d made
// was claimed: its message's last history entry "delivery attempt N" (an
// attempt handed back is made again under its number).
func (c *cluster) claimedAt(hs map[string][]domain.HistoryEntry, d delivery) time.Time {
	c.t.Helper()
	var at time.Time
	for _, e := range hs[d.id] {
		if e.To == domain.StatusDLNG && e.Reason == fmt.Sprintf("delivery attempt %d", d.attempt) {
			at = e.At
		}
	}
	require.False(c.t, at.IsZero(), "message %s has no history entry of delivery attempt %d: %v", d.id, d.attempt, hs[d.id])
	return at
}

// completedBy names the nodes that recorded a message DLVD.
func completedBy(h []domain.HistoryEntry) []string {
	var nodes []string
	for _, e := range h {
		if e.To == domain.StatusDLVD && e.From != domain.StatusDLVD {
			nodes = append(nodes, e.Node)
		}
	}
	return nodes
}
