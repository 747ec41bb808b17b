//go:build unix && !linux

package main

import "syscall"

// serveProcAttr puts serve in a process group of its own, which the tests
// kill as a whole.
func serveProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
