package cmdutil

import (
	"errors"

	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// OpenError explains a failure to open the embedded store for every
// command alike, serve included: a file that is not a store cannot be
// used, as one that is locked: exit 6 with a hint.
func OpenError(err error) error {
	if errors.Is(err, bolt.ErrNotStore) {
		return domain.WithHint(domain.ErrUnavailable, err.Error(),
			"point --db at the right file, or move this one aside to start a new store")
	}
	return err
}
