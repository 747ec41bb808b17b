package receiver

import (
	"os"

	"golang.org/x/sys/unix"
)

// unnamedTemp creates a file in the temporary directory that never has a
// name (O_TMPFILE): a serve killed at any moment leaves nothing there. A
// file system without O_TMPFILE gets a named file, unlinked at once.
func unnamedTemp() (*os.File, error) {
	f, err := os.OpenFile(os.TempDir(), os.O_RDWR|unix.O_TMPFILE, 0o600)
	if err != nil {
		return namedTemp()
	}
	return f, nil
}
