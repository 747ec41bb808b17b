//go:build !unix

package receiver

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"time"
)

// run runs command with env and the payload on stdin and returns how it
// ended and the start of its stderr. This system has no process groups to
// end as a whole: a timeout or shutdown kills the command itself, not
// what it started (the README says so).
func run(ctx context.Context, command, env []string, payload []byte) (*os.ProcessState, []byte, error) {
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &limitWriter{w: &stderr, n: 4096}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && cmd.ProcessState == nil {
		return nil, nil, err
	}
	return cmd.ProcessState, stderr.Bytes(), nil
}
