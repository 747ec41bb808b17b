//go:build unix && !linux

package receiver

import "os"

// unnamedTemp creates a file in the temporary directory and unlinks it at
// once: this system has no files without a name (O_TMPFILE).
func unnamedTemp() (*os.File, error) { return namedTemp() }
