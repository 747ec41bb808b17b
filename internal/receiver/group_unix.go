//go:build unix

package receiver

import (
	"os"
	"os/exec"
	"syscall"
)

// group is the process group an exec receiver's command runs in (§8). Its
// leader is a keeper: a small shell that does nothing but read its
// lifeline, a pipe whose only writer is this process. The command joins
// the keeper's group when it is started, so the group exists before the
// command runs and everything the command starts is in it (unless it makes
// a session of its own).
//
// The group ends in one of two ways, both killing every process in it:
// this process kills it when the delivery ends (exit, timeout, shutdown);
// or this process dies, even by SIGKILL, the kernel closes the lifeline,
// the keeper's read ends and the keeper kills its own group. No receiver
// process outlives the serve that started it — which also holds on systems
// without Linux's parent-death signal, since a closed pipe is the same
// everywhere. The keeper is in a group of its own, not serve's, so a kill
// of serve's group (a terminal's Ctrl-C, a supervisor) does not take it
// down before it has done its work; it ignores those signals too.
type group struct {
	keeper   *exec.Cmd
	lifeline *os.File // the write end
	pgid     int
}

// keeperScript is the keeper: wait for the lifeline to close, then kill
// the group, itself included.
const keeperScript = `trap '' HUP INT QUIT TERM; read -r line <&3; kill -s KILL 0`

func newGroup() (*group, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, err
	}
	keeper := exec.Command("/bin/sh", "-c", keeperScript)
	keeper.Env = []string{}
	keeper.ExtraFiles = []*os.File{r}
	keeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = keeper.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return &group{keeper: keeper, lifeline: w, pgid: keeper.Process.Pid}, nil
}

// kill sends SIGKILL to every process of the group. The keeper is not
// reaped before end, so its pid, the group's id, cannot be reused meanwhile.
func (g *group) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }

// end kills what is left of the group and reaps the keeper.
func (g *group) end() {
	g.kill()
	g.lifeline.Close()
	_ = g.keeper.Wait()
}
