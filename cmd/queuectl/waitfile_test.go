package main

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdWaitFile waits until a directory holds at least COUNT files, woken by
// file system events rather than by polling, and fails after TIMEOUT
// (default 30s). Names that start with a dot, like a file receiver's
// temporary files, do not count. The directory must exist, so that no
// event can be missed: waitfile DIR COUNT [TIMEOUT].
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitfile DIR COUNT [TIMEOUT]")
	}
	dir := ts.MkAbs(args[0])
	want, err := strconv.Atoi(args[1])
	if err != nil || want < 0 {
		ts.Fatalf("waitfile: COUNT %q is not a number of files", args[1])
	}
	timeout := 30 * time.Second
	if len(args) == 3 {
		if timeout, err = time.ParseDuration(args[2]); err != nil {
			ts.Fatalf("waitfile: TIMEOUT: %v", err)
		}
	}
	w, err := fsnotify.NewWatcher()
	ts.Check(err)
	defer w.Close()
	// Watch first, then count: a file that arrives in between is counted
	// and also wakes the loop once more.
	if err := w.Add(dir); err != nil {
		ts.Fatalf("waitfile: watch %s: %v", args[0], err)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		n := countFiles(ts, dir)
		if n >= want {
			return
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			ts.Fatalf("waitfile: watch %s: %v", args[0], err)
		case <-deadline.C:
			ts.Fatalf("waitfile: %s holds %d files after %s, want %d", args[0], n, timeout, want)
		}
	}
}

func countFiles(ts *testscript.TestScript, dir string) int {
	entries, err := os.ReadDir(dir)
	ts.Check(err)
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}
