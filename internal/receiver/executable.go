package receiver

import (
	"os"
	"syscall"
)

// WriteExecutable writes a command for an exec receiver (a script the demo
// or a test makes and then runs in this same process).
//
// A file open for writing cannot be executed (ETXTBSY). A child forked by
// any goroutine while the file is open holds a copy of the write descriptor
// until it execs, so a script written while other goroutines start commands
// can fail to run with "text file busy" after it is closed. Creating the
// descriptor under syscall.ForkLock, which every fork holds for writing until
// its child has exec'd, keeps forks out of that window.
func WriteExecutable(path string, body []byte) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, body, 0o755)
}
