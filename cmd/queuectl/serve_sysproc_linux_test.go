//go:build linux

package main

import "syscall"

// serveProcAttr puts serve in a process group of its own, which the tests
// kill as a whole, and kills serve should the test process die first.
func serveProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
