//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// The serve tests run the real `queuectl serve` in a process of its own, so
// that a SIGKILL ends the engine the way a crash would. They run the test
// binary itself: TestMain (testscript.Main) has put a copy of it named
// queuectl first on PATH, and that copy runs cli.Main. So no go toolchain
// is needed at test time, serve runs under the race detector whenever the
// tests do, and a stale build cannot be tested by mistake.

// waitLimit bounds every wait on serve or its receiver: a test fails when
// nothing it waits for has happened for this long.
const waitLimit = 30 * time.Second

// receiverScript is the exec receiver of the serve tests. It reports each
// delivery on the events FIFO ($1) when it starts and when it ends. With
// "hold" ($2), it waits in between for a sleep that the test kills to let
// the delivery go on: the test decides when a delivery ends, so it can keep
// deliveries in flight while serve dies or stops. The sleep only bounds how
// long a script outlives a test process that died. A POISON payload then
// kills serve, the script's parent, as a receiver that crashes its caller
// would. The events FIFO is opened read-write, so that opening it never
// blocks, not even once the test is gone. The script starts as few
// processes as it can: process starts are most of a delivery's cost.
const receiverScript = `#!/bin/sh
IFS= read -r payload
exec 4<>"$1"
what="$QUEUECTL_MESSAGE_ID $QUEUECTL_RECEIVER $QUEUECTL_ATTEMPT $PPID ${QUEUECTL_APP_QUEUE:--} $payload"
gate=0
if [ "$2" = hold ]; then
	sleep 300 &
	gate=$!
fi
echo "start $gate $what" >&4
if [ "$gate" != 0 ]; then
	wait "$gate"
fi
if [ "$payload" = POISON ]; then
	kill -9 "$PPID"
	exit 0
fi
echo "done $gate $what" >&4
`

// rigOptions are the engine settings of a rig's configuration.
type rigOptions struct {
	// hold makes each delivery wait for the test's release; without it,
	// deliveries end as soon as they have been reported.
	hold            bool
	workers         int
	crashes         int // engine.blacklisting.crashes
	shutdownTimeout time.Duration
	// store is the URL of a PostgreSQL store, for a cluster of serve
	// processes; empty: a bbolt file of the test's own.
	store string
	// heartbeat and leaseTTL are cluster.heartbeat and cluster.lease_ttl,
	// when they are set.
	heartbeat, leaseTTL time.Duration
}

// rig is one store and configuration, shared by the serve processes a test
// starts, one after another on a bbolt file or side by side on PostgreSQL,
// and the receiver they deliver to.
type rig struct {
	t        *testing.T
	bin      string
	store    []string // the flags that name the store
	pg       string   // the store's URL when it is PostgreSQL
	config   string
	env      []string
	reports  chan report       // lines of the events FIFO
	wake     chan struct{}     // holds a token after a serve logged or exited
	payloads map[string]string // payload by inbound message id
	ledger   ledger
	gens     []*generation // the serve processes started, in order
}

// report is one line of the events FIFO and when the test read it.
type report struct {
	line string
	at   time.Time
}

// newRig writes the receiver script and a configuration in which WMS and
// ARCHIVE run it, and messages from ERP that name no receiver are routed to
// both. It starts reading the events FIFO.
func newRig(t *testing.T, o rigOptions) *rig {
	bin, err := exec.LookPath("queuectl")
	require.NoError(t, err, "TestMain puts queuectl on PATH")
	dir := t.TempDir()
	r := &rig{
		t: t, bin: bin,
		store:  []string{"--db", filepath.Join(dir, "queuectl.db")},
		pg:     o.store,
		config: filepath.Join(dir, "config.yaml"),
		env: append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"),
			"XDG_DATA_HOME="+filepath.Join(dir, ".data"), "NO_COLOR=1",
			// Under the race detector a process waits a second before it
			// exits, to catch late reports; queuectl's processes need not.
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")),
		reports:  make(chan report, 1024),
		wake:     make(chan struct{}, 1),
		payloads: map[string]string{},
		ledger:   ledger{times: map[string]int{}, ids: map[string]bool{}},
	}
	script := filepath.Join(dir, "receiver.sh")
	events := filepath.Join(dir, "events")
	require.NoError(t, os.WriteFile(script, []byte(receiverScript), 0o755))
	require.NoError(t, syscall.Mkfifo(events, 0o600))
	mode := "go"
	if o.hold {
		mode = "hold"
	}
	command := fmt.Sprintf("[/bin/sh, %q, %q, %s]", script, events, mode)
	config := fmt.Sprintf(`engine:
  workers: %d
  shutdown_timeout: %s
  blacklisting: {enabled: true, crashes: %d}
receivers:
  WMS: {type: exec, command: %s, timeout: 5m}
  ARCHIVE: {type: exec, command: %s, timeout: 5m}
routes:
  - {sender: ERP, receivers: [WMS, ARCHIVE]}
`, o.workers, o.shutdownTimeout, o.crashes, command, command)
	if o.store != "" {
		r.store = []string{"--store", o.store}
	}
	if o.heartbeat > 0 {
		config += fmt.Sprintf("cluster: {heartbeat: %s, lease_ttl: %s}\n", o.heartbeat, o.leaseTTL)
	}
	require.NoError(t, os.WriteFile(r.config, []byte(config), 0o644))

	// Opened read-write, the FIFO opens without waiting for a writer, and
	// reads never see an end of file while receivers come and go.
	f, err := os.OpenFile(events, os.O_RDWR, 0)
	require.NoError(t, err)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			select {
			case r.reports <- report{line: sc.Text(), at: time.Now()}:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		f.Close()
		<-stopped
	})
	return r
}

// queuectl runs a queuectl command against the rig's store and returns its
// stdout; it fails the test unless the command succeeds.
func (r *rig) queuectl(stdin string, args ...string) []byte {
	r.t.Helper()
	cmd := exec.Command(r.bin, append(append(slices.Clip(r.store), "--config", r.config), args...)...)
	cmd.Env = r.env
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(r.t, err, "queuectl %s\n%s", strings.Join(args, " "), stderr.String())
	return out
}

// sendLine is one line of `send --jsonl`.
type sendLine struct {
	QoS      string `json:"qos"`
	Sender   string `json:"sender"`
	Receiver string `json:"receiver,omitempty"`
	AppQueue string `json:"app_queue,omitempty"`
	Payload  string `json:"payload"`
}

// send stores the messages with `send --jsonl` and remembers their payloads.
func (r *rig) send(msgs []sendLine) {
	r.t.Helper()
	var in strings.Builder
	for _, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(r.t, err)
		in.Write(append(b, '\n'))
	}
	ids := strings.Fields(string(r.queuectl(in.String(), "send", "--jsonl")))
	require.Len(r.t, ids, len(msgs))
	for i, id := range ids {
		r.payloads[id] = msgs[i].Payload
	}
}

// messages lists every message of the store; on a bbolt file, serve must
// not be running.
func (r *rig) messages() []domain.Message {
	r.t.Helper()
	var ms []domain.Message
	require.NoError(r.t, json.Unmarshal(r.queuectl("", "message", "list", "--limit", "0", "-o", "json"), &ms))
	return ms
}

// queues lists the queues of the store; on a bbolt file, serve must not be
// running.
func (r *rig) queues() []domain.Queue {
	r.t.Helper()
	var qs []domain.Queue
	require.NoError(r.t, json.Unmarshal(r.queuectl("", "queue", "list", "-o", "json"), &qs))
	return qs
}

// key names an outbound message by its receiver and payload, which the
// tests keep unique; a redelivery has the same key.
func key(receiver, payload string) string { return receiver + "/" + payload }

// keyOf is the key of a stored outbound message.
func (r *rig) keyOf(m domain.Message) string {
	p, ok := r.payloads[m.SentID()]
	require.True(r.t, ok, "outbound message %s comes from %q, which no test sent", m.ID, m.SentID())
	return key(m.Receiver, p)
}

// delivery is one report of the receiver script.
type delivery struct {
	done     bool // false: started, and held if the rig holds deliveries
	gate     int  // pid of the sleep that holds the delivery; 0: not held
	id       string
	receiver string
	attempt  int
	serve    int // pid of the serve process that ran the script
	appQueue string
	payload  string
	at       time.Time // when the test read the report
}

func (d delivery) key() string { return key(d.receiver, d.payload) }

func parseDelivery(rep report) (delivery, error) {
	line := rep.line
	f := strings.Fields(line)
	if len(f) == 7 {
		// An empty payload: the script read none because serve died
		// while it started.
		f = append(f, "")
	}
	if len(f) != 8 || (f[0] != "start" && f[0] != "done") {
		return delivery{}, fmt.Errorf("receiver report %q has not the form: start|done GATE ID RECEIVER ATTEMPT PPID APPQUEUE PAYLOAD", line)
	}
	gate, err1 := strconv.Atoi(f[1])
	attempt, err2 := strconv.Atoi(f[4])
	serve, err3 := strconv.Atoi(f[5])
	if err := errors.Join(err1, err2, err3); err != nil {
		return delivery{}, fmt.Errorf("receiver report %q: %v", line, err)
	}
	return delivery{done: f[0] == "done", gate: gate, id: f[2], receiver: f[3], attempt: attempt,
		serve: serve, appQueue: f[6], payload: f[7], at: rep.at}, nil
}

// release lets a held delivery go on. The sleep that holds it is gone when
// its serve's process group was killed, and then there is nothing to let go.
func (r *rig) release(d delivery) {
	r.t.Helper()
	if d.gate == 0 {
		return
	}
	if err := syscall.Kill(d.gate, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		r.t.Fatalf("release %s: %v", d.key(), err)
	}
}

// ledger is what the receiver reported delivered over a whole test.
type ledger struct {
	times map[string]int  // by key: how many deliveries ended well
	ids   map[string]bool // the outbound messages delivered
	order []delivery      // the deliveries in the order they ended
	// starts are the deliveries in the order they started.
	starts []delivery
}

func (l *ledger) add(d delivery) {
	l.times[d.key()]++
	l.ids[d.id] = true
	l.order = append(l.order, d)
}
