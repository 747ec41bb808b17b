//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/domain"
)

// serveLog keeps what serve writes to stderr: JSON log lines.
type serveLog struct {
	mu   sync.Mutex
	text bytes.Buffer
	// wrote holds a token after a write, for whoever waits on the log.
	wrote chan struct{}
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.text.Write(p)
	l.mu.Unlock()
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// record returns the first complete log line with this msg, decoded, or nil.
func (l *serveLog) record(msg string) map[string]any {
	if recs := l.records(msg); len(recs) > 0 {
		return recs[0]
	}
	return nil
}

// records returns the complete log lines with this msg, decoded.
func (l *serveLog) records(msg string) []map[string]any {
	var recs []map[string]any
	lines := strings.Split(l.String(), "\n")
	for _, line := range lines[:len(lines)-1] {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}

// generation is one `queuectl serve` process of a rig, in a process group
// of its own with the receivers it starts, and what its deliveries did.
type generation struct {
	r      *rig
	cmd    *exec.Cmd
	pid    int
	log    *serveLog
	exited chan struct{} // closed when the process has exited and been reaped

	todo     map[string]bool     // keys of messages not DLVD when it started
	done     map[string]bool     // keys it delivered
	inFlight map[string]delivery // its deliveries started and not done, by key
}

// start lists the store and starts serve, with these flags added. Of the
// expected keys, those whose outbound message is not yet DLVD are the
// generation's to do.
func (r *rig) start(expected map[string]bool, flags ...string) *generation {
	r.t.Helper()
	g := &generation{r: r, log: &serveLog{wrote: r.wake}, exited: make(chan struct{}),
		todo: map[string]bool{}, done: map[string]bool{}, inFlight: map[string]delivery{}}
	for k := range expected {
		g.todo[k] = true
	}
	for _, m := range r.listIf(len(expected) > 0) {
		if m.Stage == domain.Outbound && m.Status == domain.StatusDLVD {
			delete(g.todo, r.keyOf(m))
		}
	}
	args := append(slices.Clip(r.store), "--config", r.config, "serve", "--log-format", "json")
	g.cmd = exec.Command(r.bin, append(args, flags...)...)
	g.cmd.Env = r.env
	g.cmd.Stderr = g.log
	g.cmd.SysProcAttr = serveProcAttr()
	require.NoError(r.t, g.cmd.Start())
	g.pid = g.cmd.Process.Pid
	r.gens = append(r.gens, g)
	go func() {
		_ = g.cmd.Wait() // the test reads the outcome from ProcessState
		close(g.exited)
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}()
	r.t.Cleanup(func() {
		g.killGroup()
		<-g.exited
	})
	return g
}

// listIf lists every message of the store if asked to, and nothing else.
func (r *rig) listIf(list bool) []domain.Message {
	if !list {
		return nil
	}
	return r.messages()
}

// happening is what a generation waits for next: a receiver report, new
// log lines, or serve's exit.
type happening struct {
	report *delivery
	logged bool
	exited bool
}

// next waits for the next happening and accounts for a report. A test
// fails when nothing happens for waitLimit.
func (g *generation) next() happening {
	g.r.t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case rep := <-g.r.reports:
		d, err := parseDelivery(rep)
		require.NoError(g.r.t, err)
		g.r.account(d)
		return happening{report: &d}
	case <-g.log.wrote:
		return happening{logged: true}
	case <-g.exited:
		return happening{exited: true}
	case <-timer.C:
		g.r.t.Fatalf("nothing happened for %s; %d deliveries in flight, %d of %d done; serve's stderr:\n%s",
			waitLimit, len(g.inFlight), len(g.done), len(g.todo), g.log)
	}
	return happening{}
}

// account records a report in the rig's ledger and in the generation whose
// serve ran the delivery.
func (r *rig) account(d delivery) {
	if d.done {
		r.ledger.add(d)
	} else {
		r.ledger.starts = append(r.ledger.starts, d)
	}
	if g := r.servedBy(d); g != nil {
		g.account(d)
	}
}

// servedBy is the generation whose serve ran a delivery, or nil.
func (r *rig) servedBy(d delivery) *generation {
	for _, g := range r.gens {
		if g.pid == d.serve {
			return g
		}
	}
	return nil
}

// account records a delivery that this generation's serve ran.
func (g *generation) account(d delivery) {
	if d.done {
		delete(g.inFlight, d.key())
		g.done[d.key()] = true
	} else {
		g.inFlight[d.key()] = d
	}
}

// finished reports whether every message that was to do has been
// delivered, by this serve or before it.
func (g *generation) finished() bool {
	for k := range g.todo {
		if !g.done[k] {
			return false
		}
	}
	return true
}

// logged reports whether serve logged a line with this msg.
func (g *generation) logged(msg string) bool { return g.log.record(msg) != nil }

// killGroup sends SIGKILL to serve and every receiver it started.
func (g *generation) killGroup() {
	if err := syscall.Kill(-g.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		g.r.t.Errorf("kill serve's process group %d: %v", g.pid, err)
	}
}

// kill crashes the generation: SIGKILL for serve and its receivers at once,
// like a machine that loses power. It waits for serve to be gone.
func (g *generation) kill() {
	g.r.t.Helper()
	g.killGroup()
	g.waitExit(false)
	g.requireKilled()
}

// stop sends SIGTERM and expects a clean stop: exit 0. Deliveries that
// start meanwhile are let go; those in flight are left to the test's
// verdict, as when they were started.
func (g *generation) stop() {
	g.r.t.Helper()
	require.NoError(g.r.t, g.cmd.Process.Signal(syscall.SIGTERM))
	g.waitExit(true)
	require.Equal(g.r.t, 0, g.exitCode(), "serve after SIGTERM: %s; stderr:\n%s",
		g.status(), g.log)
}

// waitExit waits for serve to exit, accounting for the reports meanwhile,
// and letting new deliveries go on if release is set.
func (g *generation) waitExit(release bool) {
	g.r.t.Helper()
	for {
		h := g.next()
		if h.exited {
			return
		}
		if d := h.report; release && d != nil && !d.done {
			g.r.release(*d)
		}
	}
}

// status describes serve's exit, or says it is running.
func (g *generation) status() string {
	select {
	case <-g.exited:
		return g.cmd.ProcessState.String()
	default:
		return "running"
	}
}

// exitCode is serve's exit code once it has exited; -1 before, or when a
// signal ended it.
func (g *generation) exitCode() int {
	select {
	case <-g.exited:
		return g.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// requireKilled checks that serve died of SIGKILL.
func (g *generation) requireKilled() {
	g.r.t.Helper()
	<-g.exited
	ws, ok := g.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(g.r.t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL,
		"serve should have died of SIGKILL, but: %s; stderr:\n%s", g.status(), g.log)
}
