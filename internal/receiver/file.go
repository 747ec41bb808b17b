package receiver

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/queuectl/queuectl/internal/domain"
)

// File writes each payload atomically as <dir>/<id> (§8).
type File struct {
	name string
	dir  string
}

func newFile(name, dir string) (*File, error) {
	if dir == "" {
		return nil, domain.Invalidf("receivers.%s: type file needs dir", name)
	}
	removeStaleTemps(dir, time.Now().Add(-staleTemp))
	return &File{name: name, dir: dir}, nil
}

// staleTemp is the age from which a temporary file in a receiver's dir
// was left behind by a process that died while writing it: no write of a
// payload takes that long, and a file another node may be writing right
// now is younger.
const staleTemp = time.Hour

// removeStaleTemps removes the temporary files a crashed process left in
// dir, last written before cutoff. It runs when the receiver is built, at
// serve's start; what it cannot remove is left for the next start.
func removeStaleTemps(dir string, cutoff time.Time) {
	temps, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, t := range temps {
		if st, err := os.Lstat(t); err == nil && st.Mode().IsRegular() && st.ModTime().Before(cutoff) {
			os.Remove(t)
		}
	}
}

// tempPattern names the temporary files of deliveries in flight.
const tempPattern = ".queuectl-*.tmp"

// Deliver writes a temporary file, syncs it and renames it into place, so a
// reader of dir never sees a partial payload. Failures are transient: a full
// disk or a missing directory is an operator's to fix, then the retry works.
func (f *File) Deliver(ctx context.Context, d Delivery) error {
	if err := ctx.Err(); err != nil {
		return Transient("delivery cancelled: %v", err)
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return Transient("receiver %s: %v", f.name, err)
	}
	tmp, err := os.CreateTemp(f.dir, tempPattern)
	if err != nil {
		return Transient("receiver %s: %v", f.name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(d.Payload); err != nil {
		tmp.Close()
		return Transient("receiver %s: write %s: %v", f.name, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Transient("receiver %s: sync %s: %v", f.name, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return Transient("receiver %s: %v", f.name, err)
	}
	dst := filepath.Join(f.dir, d.Message.ID)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Transient("receiver %s: %v", f.name, err)
	}
	return syncDir(f.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return Transient("open %s: %v", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return Transient("sync %s: %w", dir, err)
	}
	return nil
}
