//go:build unix

package receiver

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the command in a process group of its own and, on
// timeout or shutdown, kills the whole group: a script's children (a sleep,
// a pipeline) must not outlive the delivery they belong to.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
