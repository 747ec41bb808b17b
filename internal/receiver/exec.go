package receiver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// exTempFail is sysexits' EX_TEMPFAIL: the command asks for a retry.
const exTempFail = 75

// Exec runs a command per message with the payload on stdin (§8).
type Exec struct {
	name    string
	command []string
	timeout time.Duration
}

func newExec(name string, command []string, timeout time.Duration) (*Exec, error) {
	if len(command) == 0 {
		return nil, domain.Invalidf("receivers.%s: type exec needs command", name)
	}
	return &Exec{name: name, command: command, timeout: timeout}, nil
}

// Deliver runs the command. Exit 0 is delivered; exit 75 (EX_TEMPFAIL) and
// a timeout are transient; any other exit is permanent.
func (e *Exec) Deliver(ctx context.Context, d Delivery) error {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.command[0], e.command[1:]...)
	cmd.Stdin = bytes.NewReader(d.Payload)
	md := metaOf(d.Message)
	cmd.Env = append(inheritedEnv(),
		"QUEUECTL_MESSAGE_ID="+md.ID,
		"QUEUECTL_SENDER="+md.Sender,
		"QUEUECTL_RECEIVER="+md.Receiver,
		"QUEUECTL_INTERFACE="+md.Interface,
		"QUEUECTL_APP_QUEUE="+md.AppQueue,
		"QUEUECTL_SEQ="+md.Seq,
		"QUEUECTL_ATTEMPT="+strconv.Itoa(d.Attempt),
	)
	var stderr bytes.Buffer
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return Transient("%s: timed out after %s", e.command[0], e.timeout)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return Permanent("%s: %v", e.command[0], err)
	}
	msg := strings.TrimSpace(stderr.String())
	if msg != "" {
		msg = ": " + firstLine(lastLine(msg), 200)
	}
	if ee.ExitCode() == exTempFail {
		return Transient("%s exited %d (temporary failure)%s", e.command[0], exTempFail, msg)
	}
	if ee.ExitCode() < 0 {
		return Transient("%s was killed (%v)%s", e.command[0], ee.ProcessState, msg)
	}
	return Permanent("%s exited %d%s", e.command[0], ee.ExitCode(), msg)
}

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

// inheritedEnv is this process's environment without its own QUEUECTL_*
// settings: a receiver gets the message's metadata under that prefix, and
// never the server's configuration or token.
func inheritedEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "QUEUECTL_") {
			out = append(out, kv)
		}
	}
	return out
}
