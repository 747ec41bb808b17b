//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// onTerminal starts queuectl with args on term, as the foreground process
// of its own session whose controlling terminal term is, as a shell starts
// a command: the case in which termenv would query the terminal. Neither
// CI nor NO_COLOR is set, and TERM names a terminal that has colours.
func onTerminal(t *testing.T, b *pipeBundle, term *terminal, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(b.bin, append([]string{"--db", b.db}, args...)...)
	for _, kv := range b.env {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.slave, term.slave, term.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	return cmd
}

// TestNoTerminalQueryOnACommand: a command run on a terminal writes to it
// what it prints and nothing else. Bubble Tea's package initialisation
// would ask the terminal for its background colour (OSC 11) and the cursor
// position, and wait up to 5 s for answers that this terminal never gives.
func TestNoTerminalQueryOnACommand(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	term := openTerminal(t, 80, 24)
	cmd := onTerminal(t, b, term, "version")
	term.waitFor(t, "queuectl ")
	require.Equal(t, 0, waitExit(t, cmd, 30*time.Second))
	term.mu.Lock()
	screen := term.screen.String()
	term.mu.Unlock()
	require.True(t, strings.HasPrefix(screen, "queuectl "), "%q", screen)
	require.NotContains(t, screen, "\x1b", "queuectl wrote an escape sequence to the terminal: %q", screen)
}

// TestTUIHasColoursOnATerminal: on a terminal with colours the TUI draws
// in them (the active tab bold and reversed): CI, which termprobe sets
// while the packages initialise, is unset again before any command runs.
func TestTUIHasColoursOnATerminal(t *testing.T) {
	t.Parallel()
	b := setupPipe(t)
	b.blacklist(t, 2, 1)
	term := openTerminal(t, 80, 24)
	cmd := onTerminal(t, b, term, "tui")
	term.waitFor(t, "\x1b[1;7m[1 Queues]")
	_, err := term.master.Write([]byte("q"))
	require.NoError(t, err)
	require.Equal(t, 0, waitExit(t, cmd, 30*time.Second))
	term.mu.Lock()
	defer term.mu.Unlock()
	require.False(t, bytes.Contains(term.screen.Bytes(), []byte("\x1b]11;?")), "the TUI asked for the background colour")
}
