//go:build linux

// Package receivertest helps tests of exec receivers see the processes a
// receiver leaves behind.
package receivertest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// GroupMembers lists the processes of process group pgid that have not
// exited (zombies left out).
func GroupMembers(t testing.TB, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			out = append(out, pid)
		}
	}
	return out
}

// RequireGroupGone waits until every process of group pgid has exited,
// each through a pidfd, which turns readable when its process exits; it
// fails the test if one is still alive after limit. The group must be
// killed, or on its way to be, so that no process joins it meanwhile.
func RequireGroupGone(t testing.TB, pgid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, pid := range GroupMembers(t, pgid) {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // gone meanwhile
		}
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		exited := waitReadable(t, fd, time.Until(deadline))
		_ = unix.Close(fd)
		if !exited {
			t.Fatalf("process %d of group %d is still alive after %s (left: %v)", pid, pgid, limit, GroupMembers(t, pgid))
		}
	}
	if left := GroupMembers(t, pgid); len(left) > 0 {
		t.Fatalf("processes %v joined group %d while it ended", left, pgid)
	}
}

// waitReadable polls fd until it is readable or d has passed.
func waitReadable(t testing.TB, fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(max(d, 0).Milliseconds()))
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			t.Fatalf("poll pidfd: %v", err)
		}
		return n == 1
	}
}
