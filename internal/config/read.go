package config

import (
	"fmt"
	"io"
	"os"
)

// MaxFile bounds the files queuectl reads as configuration: the config
// file and token files. Both are small; a bigger one is a mistake (a wrong
// path, a device), refused before it is read further.
const MaxFile = 4 << 20

// ReadBounded reads a file of at most max bytes. A longer one is an error
// naming the file and the bound, read no further than the bound.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes; it cannot be a queuectl configuration", path, max)
	}
	return b, nil
}
