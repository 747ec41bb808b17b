// Package termprobe keeps the package initialisation of Bubble Tea v1 from
// probing the terminal on every command.
//
// Bubble Tea's init asks Lip Gloss whether the terminal's background is dark
// (tea_init.go, "to be removed in v2"), and termenv answers by writing an
// OSC 11 query and a cursor position request to stdout when it is a terminal
// and reading the reply from it: a round trip to the terminal before any
// command starts, and termenv's 5 s timeout on a terminal that answers
// neither. queuectl's own styles use no adaptive colours, so the answer is
// never used.
//
// termenv takes no output for a terminal while CI is set. This package's
// init sets CI when it is unset, and Restore, which main calls first, unsets
// it again. Go initialises the packages of a program in the order of their
// import paths among those whose imports are initialised; this package
// imports only syscall, so it comes before os, and so before termenv, Lip
// Gloss and Bubble Tea, which import os. Only the program's main package
// may import it: every other package of the program and its tests would
// see CI set.
package termprobe

import "syscall"

// ci is the variable termenv reads: set, it takes no output for a terminal.
const ci = "CI"

// set says that init set CI, which Restore unsets. It is written before
// main runs and by Restore, once, at its start.
var set bool

func init() {
	if _, ok := syscall.Getenv(ci); !ok {
		set = syscall.Setenv(ci, "1") == nil
	}
}

// Restore unsets CI if init set it, so that the commands, the terminal UI
// and the processes they start see the environment queuectl was started
// with. It is called first in main, after every package is initialised.
func Restore() {
	if set {
		set = false
		_ = syscall.Unsetenv(ci)
	}
}
