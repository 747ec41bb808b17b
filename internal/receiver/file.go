package receiver

import (
	"context"
	"os"
	"path/filepath"

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
	return &File{name: name, dir: dir}, nil
}

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
	tmp, err := os.CreateTemp(f.dir, ".queuectl-*.tmp")
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
