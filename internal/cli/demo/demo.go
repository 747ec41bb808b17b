// Package demo implements `queuectl demo`: build a store that shows every
// state of §4 with the real engine and real receivers, then say how to
// explore it.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// Options are the parsed flags of `queuectl demo`.
type Options struct {
	IO    *cmdutil.IOStreams
	Hintf func(format string, args ...any)
	// DB is the store to build; Force replaces an existing one.
	DB    string
	Force bool
	// Exe is the queuectl binary the crash phase runs as a child process.
	Exe string
}

// NewCmd builds `queuectl demo`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{IO: f.IO, Hintf: f.Hintf}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a demo store that shows every message state, then explore it",
		Long: `Build a realistic demo store with the real engine and real receivers: local
HTTP servers and exec scripts that the demo starts itself. It shows delivered
EO and EOIO traffic over parallel queues, a blocked EOIO queue with HOLD
successors, messages WAITing on a flaky receiver, a message NDLV after a
permanent error, a blacklisted message produced by two real crashes of a
child engine process, and transactional sends that the engine checked back
on with their producer (a local endpoint): one committed and delivered, one
rolled back into the audit log, and one stuck PEND with its check history.

The store is the default one (or --db); a store that already holds messages
is left alone unless --force replaces it. It takes a few seconds.`,
		Example: `  queuectl demo
  queuectl demo --db /tmp/demo.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.Config()
			if err != nil {
				return err
			}
			if opts.DB, err = cmdutil.StorePath(c); err != nil {
				return err
			}
			if opts.Exe, err = os.Executable(); err != nil {
				return fmt.Errorf("demo: cannot find its own binary for the crash phase: %w", err)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the store if it already holds messages")
	return cmd
}

// Run builds the demo store.
func Run(ctx context.Context, opts *Options) error {
	if err := prepareStore(opts.DB, opts.Force); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "queuectl-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	started := time.Now()
	w := newWorld(work)
	defer w.close()
	cfg, cfgFile, err := w.start()
	if err != nil {
		return err
	}
	opts.Hintf("building a demo store in %s", opts.DB)
	b := &builder{opts: opts, cfg: cfg, cfgFile: cfgFile, world: w}
	if err := b.traffic(ctx); err != nil {
		return err
	}
	if err := b.crashes(ctx); err != nil {
		return err
	}
	return b.report(ctx, time.Since(started))
}

// prepareStore makes sure the demo does not mix with real data.
func prepareStore(path string, force bool) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		return domain.Invalidf("--db %s is a directory", path)
	}
	if force {
		return os.Remove(path)
	}
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	empty := true
	err = st.View(context.Background(), func(r store.Reader) error {
		return r.Messages(store.MessageFilter{Limit: 1}, func(*domain.Message) error {
			empty = false
			return nil
		})
	})
	if err != nil || empty {
		return err
	}
	return domain.WithHint(domain.ErrInvalid,
		fmt.Sprintf("the store %s already holds messages; the demo builds its own", path),
		"run 'queuectl demo --db /tmp/queuectl-demo.db' for a separate store, or add --force to replace this one")
}
