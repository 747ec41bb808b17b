//go:build unix

package receiver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// run runs command with env and the payload on stdin, in a process group
// that a keeper holds (see group), and returns how it ended and the start
// of its stderr. Whatever ends the delivery — the command's exit, ctx (its
// timeout, serve's shutdown) or serve's death — ends the whole group: a
// script's background children and pipelines included. err is set only
// when the command could not be started; a *setupError when this side
// failed to prepare it.
func run(ctx context.Context, command, env []string, payload []byte) (*os.ProcessState, []byte, error) {
	// The payload is whole before the command starts: it reads it from a
	// file, not from a pipe that this process feeds, so a serve that dies
	// mid-delivery cannot hand the command a cut-off payload that looks
	// complete in the moment before the group is killed.
	stdin, err := payloadFile(payload)
	if err != nil {
		return nil, nil, &setupError{"its stdin", err}
	}
	defer stdin.Close()
	g, err := newGroup()
	if err != nil {
		return nil, nil, &setupError{"the keeper of its process group", err}
	}
	defer g.end()
	// stderr is a plain pipe, not os/exec's copying goroutine: Wait
	// returns when the command exits, and a child it left behind holding
	// stderr cannot delay the group's end.
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return nil, nil, &setupError{"its stderr", err}
	}
	defer stderrR.Close()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stderr = stdin, stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: g.pgid}
	err = cmd.Start()
	stderrW.Close()
	if err != nil {
		return nil, nil, err
	}
	var stderr bytes.Buffer
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(&limitWriter{w: &stderr, n: 4096}, stderrR)
	}()
	stop := context.AfterFunc(ctx, g.kill)
	err = cmd.Wait()
	stop()
	g.kill()
	// The group is gone, and with it every holder of stderr; a process
	// that left the group (setsid) may still hold it: it is not waited for.
	grace := time.AfterFunc(time.Second, func() { stderrR.Close() })
	<-drained
	grace.Stop()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, nil, err
	}
	return cmd.ProcessState, stderr.Bytes(), nil
}

// payloadFile returns a temporary file holding the payload, read from its
// start, that has no name: nothing is left behind, whenever serve dies.
func payloadFile(payload []byte) (*os.File, error) {
	f, err := unnamedTemp()
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(payload); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// namedTemp creates a temporary file and unlinks it at once: where the
// system cannot create a file without a name, the name lives only until
// the next system call — unless serve dies in between.
func namedTemp() (*os.File, error) {
	f, err := os.CreateTemp("", "queuectl-payload-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
