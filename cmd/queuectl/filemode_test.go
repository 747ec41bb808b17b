package main

import (
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFileMode checks the permission bits of a file or directory, in octal:
// filemode MODE PATH.
func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: filemode MODE PATH")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	ts.Check(err)
	info, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	if got := info.Mode().Perm(); uint64(got) != want {
		ts.Fatalf("%s has mode %04o, want %04o", args[1], got, want)
	}
}
