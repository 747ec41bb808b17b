package receiver

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// exTempFail is sysexits' EX_TEMPFAIL: the command asks for a retry.
const exTempFail = 75

// Exec runs a command per message with the payload on stdin (§8), in a
// clean environment and a process group of its own (run, per system).
type Exec struct {
	name    string
	command []string
	timeout time.Duration
	// env is what every run of the command gets before the message's
	// metadata: serve's PATH, HOME, LANG and TZ, the variables the
	// receiver inherits by name, and its own.
	env []string
}

func newExec(name string, c config.Receiver, timeout time.Duration) (*Exec, error) {
	if len(c.Command) == 0 {
		return nil, domain.Invalidf("receivers.%s: type exec needs command", name)
	}
	return &Exec{name: name, command: c.Command, timeout: timeout, env: cleanEnv(c.Env, c.InheritEnv)}, nil
}

// cleanEnv is a command's environment without the message: never serve's
// whole environment, which holds its secrets (a database password, cloud
// keys), only what the receiver's configuration names.
func cleanEnv(own map[string]string, inherit []string) []string {
	var env []string
	for _, k := range append([]string{"PATH", "HOME", "LANG", "TZ"}, inherit...) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(own)) {
		env = append(env, k+"="+own[k])
	}
	return env
}

// Deliver runs the command. Exit 0 is delivered; exit 75 (EX_TEMPFAIL), a
// timeout, a kill and a start that failed for a passing reason are
// transient; any other exit or start failure is permanent. When Deliver
// returns, no process of the command's group is left.
func (e *Exec) Deliver(ctx context.Context, d Delivery) error {
	runCtx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	md := metaOf(d.Message)
	// The metadata comes last: the configuration cannot name QUEUECTL_
	// variables, and the message's own must win in any case.
	env := append(slices.Clip(e.env),
		"QUEUECTL_MESSAGE_ID="+md.ID,
		"QUEUECTL_SENDER="+md.Sender,
		"QUEUECTL_RECEIVER="+md.Receiver,
		"QUEUECTL_INTERFACE="+md.Interface,
		"QUEUECTL_APP_QUEUE="+md.AppQueue,
		"QUEUECTL_SEQ="+md.Seq,
		"QUEUECTL_ATTEMPT="+strconv.Itoa(d.Attempt),
	)
	state, stderr, err := run(runCtx, e.command, env, d.Payload)
	var setup *setupError
	switch {
	case errors.As(err, &setup):
		return Transient("%s: %v", e.command[0], err)
	case err != nil && passing(err):
		return Transient("%s: cannot start now: %v", e.command[0], err)
	case err != nil:
		return Permanent("%s: %v", e.command[0], err)
	case ctx.Err() != nil:
		return Transient("%s: delivery cancelled: %v", e.command[0], ctx.Err())
	case runCtx.Err() != nil:
		return Transient("%s: timed out after %s", e.command[0], e.timeout)
	case state.Success():
		return nil
	}
	msg := strings.TrimSpace(string(stderr))
	if msg != "" {
		msg = ": " + firstLine(lastLine(msg), 200)
	}
	switch code := state.ExitCode(); {
	case code == exTempFail:
		return Transient("%s exited %d (temporary failure)%s", e.command[0], exTempFail, msg)
	case code < 0:
		return Transient("%s was killed (%v)%s", e.command[0], state, msg)
	default:
		return Permanent("%s exited %d%s", e.command[0], code, msg)
	}
}

// passing reports whether a command could not be started for a reason that
// goes away by itself: its file is being written (text file busy), or the
// system is out of processes, memory or file descriptors for the moment.
func passing(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ETXTBSY, syscall.EAGAIN, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE, syscall.EBUSY} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// setupError is a failure to prepare a command's run on this side (its
// stdin, its process group's keeper): the command is not at fault, so the
// delivery is retried.
type setupError struct {
	what string
	err  error
}

func (e *setupError) Error() string { return "cannot prepare " + e.what + ": " + e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// limitWriter keeps the first n bytes and drops the rest, so a chatty
// command cannot fill memory.
type limitWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
