//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// terminal is a pseudo-terminal: the TUI runs on its slave side, the test
// reads the screen from its master side and types into it.
type terminal struct {
	master, slave *os.File
	mu            sync.Mutex
	screen        bytes.Buffer
	// drew gets a token after each read of the screen.
	drew chan struct{}
	done chan struct{}
}

func openTerminal(t *testing.T, cols, rows uint16) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0), "unlockpt")
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}))
	term := &terminal{master: master, slave: slave, drew: make(chan struct{}, 1), done: make(chan struct{})}
	// The screen is read all along: a TUI whose output nobody reads would
	// stop drawing, and refreshing.
	go func() {
		defer close(term.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.screen.Write(buf[:n])
			term.mu.Unlock()
			select {
			case term.drew <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
		<-term.done
	})
	return term
}

// waitFor waits until the screen has shown text.
func (term *terminal) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		term.mu.Lock()
		shown := bytes.Contains(term.screen.Bytes(), []byte(text))
		term.mu.Unlock()
		if shown {
			return
		}
		select {
		case <-term.drew:
		case <-deadline.C:
			require.Failf(t, "the TUI did not show it", "%q", text)
		}
	}
}

// TestREADMEPipesWithTUIOpen runs the pipes 20 times each while a TUI is
// open on the same store, refreshing ten times a second: the TUI holds the
// store only while it reads, and serves its socket meanwhile, so no command
// is locked out — `queue list` answers, the pipes go through.
func TestREADMEPipesWithTUIOpen(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	b.blacklist(t, 60, 12)

	term := openTerminal(t, 80, 24)
	tui := exec.Command(b.bin, "--db", b.db, "tui", "--refresh", "100ms")
	tui.Env = append(b.env, "TERM=xterm-256color")
	tui.Stdin, tui.Stdout, tui.Stderr = term.slave, term.slave, term.slave
	tui.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, tui.Start())
	exited := make(chan error, 1)
	go func() { exited <- tui.Wait() }()
	t.Cleanup(func() {
		if tui.ProcessState == nil {
			_ = tui.Process.Kill()
		}
	})
	term.waitFor(t, "XBTO21070011") // the last queue: the TUI has read the store

	require.Contains(t, b.run(t, "queue", "list", "-o", "ids"), "XBTO21070000\n", "queue list answers while the TUI is open")
	requirePipes(t, b, 60, 12)

	_, err := term.master.Write([]byte("q"))
	require.NoError(t, err)
	select {
	case err := <-exited:
		require.NoError(t, err, "the TUI quits cleanly on q")
	case <-time.After(30 * time.Second):
		require.Fail(t, "the TUI did not quit on q")
	}
}
