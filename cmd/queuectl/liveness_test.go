//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// The liveness tests (§11) attack a cluster of real serve processes where it
// hurts: operators racing each other, a database that restarts, hangs or
// drops every connection, a stop while the database is gone, a second
// process under a node id in use. The nodes deliver to an HTTP receiver of
// the test's own, which counts what it accepted and notices a message
// delivered twice at once.

// liveReceiver is the test's HTTP receiver.
type liveReceiver struct {
	srv *httptest.Server

	mu sync.Mutex
	// reject answers every delivery 400, a permanent error.
	reject bool
	// hold, when set, keeps each delivery until it is closed.
	hold chan struct{}
	// active counts the deliveries of a message under way; overlaps names
	// the messages delivered twice at once.
	active   map[string]int
	overlaps []string
	// accepted counts the deliveries answered 200, by message id; order
	// lists, per app queue, the payloads in the order first accepted.
	accepted map[string]int
	order    map[string][]string
	// started holds a token after a delivery began; onAccept, if set,
	// hears of each delivery accepted.
	started  chan struct{}
	onAccept func()
}

func newLiveReceiver(t *testing.T) *liveReceiver {
	r := &liveReceiver{active: map[string]int{}, accepted: map[string]int{}, order: map[string][]string{},
		started: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.setHold(false)
		r.srv.Close()
	})
	return r
}

func (r *liveReceiver) serve(w http.ResponseWriter, req *http.Request) {
	id := req.Header.Get("X-Queuectl-Message-Id")
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.active[id]++
	if r.active[id] > 1 {
		r.overlaps = append(r.overlaps, id)
	}
	reject, hold := r.reject, r.hold
	r.mu.Unlock()
	select {
	case r.started <- struct{}{}:
	default:
	}
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
		}
	}
	r.mu.Lock()
	r.active[id]--
	gone := req.Context().Err() != nil
	if !reject && !gone {
		if r.accepted[id] == 0 {
			q := req.Header.Get("X-Queuectl-App-Queue")
			r.order[q] = append(r.order[q], string(body))
		}
		r.accepted[id]++
	}
	accepted := r.accepted[id] > 0
	hook := r.onAccept
	r.mu.Unlock()
	if accepted && hook != nil {
		hook()
	}
	if reject {
		http.Error(w, "rejected by the test", http.StatusBadRequest)
	}
}

func (r *liveReceiver) setReject(v bool) {
	r.mu.Lock()
	r.reject = v
	r.mu.Unlock()
}

// setHold makes deliveries wait (true) or lets every one go (false).
func (r *liveReceiver) setHold(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
	if v {
		r.hold = make(chan struct{})
	}
}

// acceptedCount is how many messages were accepted at least once.
func (r *liveReceiver) acceptedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.accepted)
}

// liveConfig is the configuration of the liveness tests' nodes.
func liveConfig(url string, leaseTTL time.Duration) string {
	return fmt.Sprintf(`engine:
  workers: 8
  poll_interval: 300ms
  shutdown_timeout: 2s
  retry: {count: 3, interval: 100ms}
receivers:
  WMS: {type: http, urls: [%q], timeout: 30s}
cluster: {heartbeat: 200ms, lease_ttl: %s}
`, url, leaseTTL)
}

// useConfig replaces the rig's configuration.
func (r *rig) useConfig(text string) {
	r.t.Helper()
	require.NoError(r.t, os.WriteFile(r.config, []byte(text), 0o644))
}

// count counts the outbound messages with these statuses.
func (c *cluster) count(statuses ...domain.Status) int {
	c.t.Helper()
	return c.countIn([]domain.Stage{domain.Outbound}, statuses...)
}

// countAll counts the messages with these statuses, in every stage: an
// inbound message not yet routed is one the cluster still has to deliver.
func (c *cluster) countAll(statuses ...domain.Status) int {
	c.t.Helper()
	return c.countIn([]domain.Stage{domain.Inbound, domain.Outbound}, statuses...)
}

func (c *cluster) countIn(stages []domain.Stage, statuses ...domain.Status) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	names := make([]string, len(statuses))
	for i, s := range statuses {
		names[i] = string(s)
	}
	in := make([]string, len(stages))
	for i, s := range stages {
		in[i] = string(s)
	}
	var n int
	require.NoError(c.t, c.db.QueryRow(ctx, `SELECT count(*) FROM messages WHERE stage = ANY($1) AND status = ANY($2)`,
		in, names).Scan(&n))
	return n
}

// waitUntil waits, on the cluster's happenings, until ok holds.
func (c *cluster) waitUntil(what string, ok func() bool) {
	c.t.Helper()
	c.waiting = what
	for !ok() {
		c.next()
	}
}

// TestClusterResendsRacingOperatorsAreDelivered: 300 messages NDLV, and three
// operators resend them all while three others fail them all, at once, on
// two nodes. The actions that lose change nothing and notify nothing, and a
// claim skips what they hold: the messages resent must still be delivered,
// with no other message to wake the nodes — the poll is the guarantee
// behind every wake-up. Five runs in a row, or as many as
// QUEUECTL_TEST_SOAK_RUNS says (20 for a soak: go test -count does not
// repeat the cluster's state, only its start).
func TestClusterResendsRacingOperatorsAreDelivered(t *testing.T) {
	t.Parallel()
	runs := 5
	if v := os.Getenv("QUEUECTL_TEST_SOAK_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "QUEUECTL_TEST_SOAK_RUNS=%q must be a number of runs", v)
		runs = n
	}
	c := newCluster(t, rigOptions{workers: 8, crashes: 2, shutdownTimeout: 10 * time.Second})
	rcv := newLiveReceiver(t)
	c.useConfig(liveConfig(rcv.srv.URL, clusterLeaseTTL))
	c.start("n1")
	c.start("n2")
	var slowest time.Duration
	for run := range runs {
		rcv.setReject(true)
		var msgs []sendLine
		for i := range 300 {
			msgs = append(msgs, sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: fmt.Sprintf("r%02d-%03d", run, i)})
		}
		c.send(msgs)
		c.waitUntil(fmt.Sprintf("run %d: 300 messages NDLV", run), func() bool { return c.count(domain.StatusNDLV) == 300 })
		rcv.setReject(false)
		ids := strings.Join(c.ids(domain.StatusNDLV), "\n") + "\n"
		var wg sync.WaitGroup
		for i := range 6 {
			args := []string{"message", "resend", "-"}
			if i%2 == 1 {
				args = []string{"message", "fail", "--reason", "the test races a resend", "-"}
			}
			wg.Go(func() { c.act(ids, args...) })
		}
		wg.Wait()
		acted := time.Now()
		c.waitUntil(fmt.Sprintf("run %d: every message resent delivered", run), func() bool {
			return c.count(domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT, domain.StatusNDLV) == 0
		})
		slowest = max(slowest, time.Since(acted))
		require.Equal(t, 300*(run+1), c.count(domain.StatusDLVD, domain.StatusFAIL))
	}
	t.Logf("the slowest run delivered its resent messages %s after the operators' actions (engine.poll_interval 300ms)",
		slowest.Round(time.Millisecond))
	c.stopAll()
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	require.Empty(t, rcv.overlaps, "messages delivered twice at once")
}

// ids lists the outbound messages with this status.
func (c *cluster) ids(s domain.Status) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT id::text FROM messages WHERE stage = 'outbound' AND status = $1 ORDER BY id`, string(s))
	require.NoError(c.t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(c.t, err)
	return ids
}

// act runs a bulk action of an operator; losing a race to another (exit 4,
// or 5 for some) is its right.
func (c *cluster) act(stdin string, args ...string) {
	cmd := exec.Command(c.bin, append(append(append([]string{}, c.store...), "--config", c.config), args...)...)
	cmd.Env, cmd.Stdin = c.env, strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err != nil && code != 4 && code != 5 {
		c.t.Errorf("queuectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestClusterSurvivesDatabaseOutages runs two nodes under load on a
// PostgreSQL server of the test's own and attacks the database: it
// restarts as after a crash, hangs (SIGSTOP) for longer than the lease,
// and drops every connection. No serve exits; nothing is lost; no message
// counts a crash (no node died); nothing is delivered twice at once; each
// app queue keeps its order.
func TestClusterSurvivesDatabaseOutages(t *testing.T) {
	t.Parallel()
	pg, url := startPGServer(t)
	const leaseTTL = 3 * time.Second
	c := newClusterOn(t, rigOptions{workers: 8, crashes: 2, shutdownTimeout: 10 * time.Second}, url)
	rcv := newLiveReceiver(t)
	rcv.onAccept = c.poke
	c.useConfig(liveConfig(rcv.srv.URL, leaseTTL))
	c.start("n1")
	c.start("n2")

	// The load: batches of EO and EOIO messages, sent until the attacks
	// end; a batch the database refused is sent again, under new payloads.
	stop, stopped := make(chan struct{}), make(chan struct{})
	var sentMu sync.Mutex
	sent := map[string]bool{}
	go func() {
		defer close(stopped)
		for batch := 0; ; batch++ {
			select {
			case <-stop:
				return
			default:
			}
			var msgs []sendLine
			for i := range 20 {
				m := sendLine{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: fmt.Sprintf("b%04d-%02d", batch, i)}
				if i%2 == 1 {
					m.QoS, m.AppQueue = "EOIO", fmt.Sprintf("Q%d", i%6)
					m.Payload = fmt.Sprintf("%s:%06d", m.AppQueue, batch*20+i)
				}
				msgs = append(msgs, m)
			}
			if c.trySend(msgs) {
				sentMu.Lock()
				for _, m := range msgs {
					sent[m.Payload] = true
				}
				sentMu.Unlock()
			}
		}
	}()
	defer func() {
		select {
		case <-stopped:
		default:
			close(stop)
			<-stopped
		}
	}()
	progress := func(what string) {
		t.Helper()
		from := rcv.acceptedCount()
		c.waitUntil(what, func() bool { return rcv.acceptedCount() >= from+50 })
	}
	progress("the first deliveries")

	pg.restart()
	progress("deliveries after a restart of the database (-m immediate)")

	pg.pause()
	select {
	case <-time.After(10 * time.Second): // the outage: longer than the lease
	case <-c.t.Context().Done():
	}
	pg.resume()
	progress("deliveries after the database hung for 10s")

	t.Logf("terminated %d sessions", pg.terminateAll(url))
	progress("deliveries after every session was terminated")

	close(stop)
	<-stopped
	c.waitUntil("every message delivered", func() bool {
		return c.countAll(domain.StatusTBDL, domain.StatusDLNG, domain.StatusWAIT, domain.StatusPEND) == 0
	})
	for _, n := range c.nodes {
		require.Equal(t, "running", n.status(), "node %s:\n%s", n.id, n.log)
	}
	c.stopAll()

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	require.Empty(t, rcv.overlaps, "messages delivered twice at once, by two owners")
	payloads := c.outboundPayloads()
	stored := map[string]bool{}
	for _, m := range c.messages() {
		require.Equal(t, domain.StatusDLVD, m.Status, "message %s (%s): %s", m.ID, m.Stage, m.Error)
		require.Zero(t, m.Crashes, "message %s: no node crashed", m.ID)
		if m.Stage == domain.Outbound {
			require.Positive(t, rcv.accepted[m.ID], "message %s is DLVD, but the receiver never accepted it", m.ID)
			stored[payloads[m.ID]] = true
		}
	}
	sentMu.Lock()
	defer sentMu.Unlock()
	for p := range sent {
		require.True(t, stored[p], "the message %s was accepted by send and is gone", p)
	}
	for q, payloads := range rcv.order {
		if q == "" {
			continue
		}
		require.IsIncreasing(t, payloads, "app queue %s out of order", q)
	}
}

// trySend sends messages with send --jsonl and reports whether the store
// took them; a database that is down refuses them (exit 6).
func (c *cluster) trySend(msgs []sendLine) bool {
	var in strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&in, `{"qos":%q,"sender":%q,"receiver":%q,"app_queue":%q,"payload":%q}`+"\n",
			m.QoS, m.Sender, m.Receiver, m.AppQueue, m.Payload)
	}
	cmd := exec.Command(c.bin, append(append(append([]string{}, c.store...), "--config", c.config), "send", "--jsonl")...)
	cmd.Env, cmd.Stdin = c.env, strings.NewReader(in.String())
	return cmd.Run() == nil
}

// outboundPayloads reads the payload of every outbound message, by id.
func (c *cluster) outboundPayloads() map[string]string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT m.id::text, convert_from(p.data, 'UTF8') FROM messages m
		JOIN payloads p ON p.id = m.payload_id WHERE m.stage = 'outbound'`)
	require.NoError(c.t, err)
	out := map[string]string{}
	var id, data string
	_, err = pgx.ForEachRow(rows, []any{&id, &data}, func() error {
		out[id] = data
		return nil
	})
	require.NoError(c.t, err)
	return out
}

// TestServeStopWhileTheDatabaseIsDown: serve gets SIGTERM while a delivery
// is in flight and the database is down. It lets the delivery finish,
// cannot record it within engine.shutdown_timeout, and exits 1 saying how
// many messages it leaves DLNG, which the next start's recovery counts as
// crashes — as it does.
func TestServeStopWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	pg, url := startPGServer(t)
	c := newClusterOn(t, rigOptions{workers: 8, crashes: 2, shutdownTimeout: 2 * time.Second}, url)
	rcv := newLiveReceiver(t)
	c.useConfig(liveConfig(rcv.srv.URL, 3*time.Second))
	rcv.setHold(true)
	n := c.start("n1")
	c.send([]sendLine{{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "held"}})
	select {
	case <-rcv.started:
	case <-time.After(waitLimit):
		t.Fatalf("no delivery started\n%s", n.log)
	}
	pg.stop()
	n.mayExit = true
	require.NoError(t, n.cmd.Process.Signal(syscall.SIGTERM))
	rcv.setHold(false)
	select {
	case <-n.exited:
	case <-time.After(waitLimit):
		t.Fatalf("serve did not exit after SIGTERM\n%s", n.log)
	}
	require.Equal(t, 1, n.exitCode(), "serve exits 1 when it cannot hand back what it holds:\n%s", n.log)
	require.Contains(t, n.log.String(), "1 message DLNG that the store could not take back")
	require.Contains(t, n.log.String(), "their recovery counts a crash for each at the next start of this node")

	pg.start()
	c.start("n1")
	c.waitUntil("the message delivered after the restart", func() bool { return c.count(domain.StatusDLVD) == 1 })
	ms := c.messages()
	for _, m := range ms {
		if m.Stage == domain.Outbound {
			require.Equal(t, 1, m.Crashes, "the recovery counted the crash serve announced")
		}
	}
	c.stopAll()
}

// TestServeRefusesANodeIDInUse: a second serve under the id of a live node
// exits 2, naming the live node's address, and the first goes on.
func TestServeRefusesANodeIDInUse(t *testing.T) {
	t.Parallel()
	c := newCluster(t, rigOptions{workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second})
	rcv := newLiveReceiver(t)
	c.useConfig(liveConfig(rcv.srv.URL, clusterLeaseTTL))
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	first := &node{generation: c.rig.start(nil, "--node-id", "twin", "--listen", addr), id: "twin"}
	c.nodes = append(c.nodes, first)
	c.waitUntil("the first node to run", c.running)

	cmd := exec.Command(c.bin, append(append(append([]string{}, c.store...), "--config", c.config),
		"serve", "--node-id", "twin", "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)))...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 2, cmd.ProcessState.ExitCode(), "%s", out)
	require.Contains(t, string(out), "node id twin is in use")
	require.Contains(t, string(out), addr, "the refusal names the live node's address")

	c.send([]sendLine{{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "after"}})
	c.waitUntil("the first node to deliver", func() bool { return c.count(domain.StatusDLVD) == 1 })
	c.stopAll()
}

// TestServeWaitsForADatabaseDownAtStart: a serve started while its database
// is down does not exit: it says it waits, and runs and delivers once the
// database is back (an outage ends no serve, not even at its start).
func TestServeWaitsForADatabaseDownAtStart(t *testing.T) {
	t.Parallel()
	pg, url := startPGServer(t)
	c := newClusterOn(t, rigOptions{workers: 2, crashes: 2, shutdownTimeout: 10 * time.Second}, url)
	rcv := newLiveReceiver(t)
	c.useConfig(liveConfig(rcv.srv.URL, clusterLeaseTTL))
	pg.stop()
	n := c.start("n1")
	c.waitUntil("serve to say it waits for the database", func() bool {
		return n.logged("the database is unreachable; serve waits for it")
	})
	pg.start()
	c.waitUntil("the node to run", c.running)
	c.send([]sendLine{{QoS: "EO", Sender: "ERP", Receiver: "WMS", Payload: "after the outage"}})
	c.waitUntil("the message delivered", func() bool { return c.count(domain.StatusDLVD) == 1 })
	c.stopAll()
}
