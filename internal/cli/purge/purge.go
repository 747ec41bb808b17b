// Package purge implements `queuectl purge`: deleting delivered and failed
// messages past their retention.
package purge

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// Options are the parsed flags of `purge`.
type Options struct {
	IO     *cmdutil.IOStreams
	Admin  func() (admin.Service, error)
	Format func() (output.Format, error)
	Config func() (*config.Config, error)
	Now    func() time.Time

	OlderThan string
	DryRun    bool
}

// Result is what `purge -o json` prints: the counts per status and the
// cutoffs they were taken at.
type Result struct {
	*admin.PurgeResult `yaml:",inline"`
	DeliveredBefore    time.Time `json:"delivered_before" yaml:"delivered_before"`
	FailedBefore       time.Time `json:"failed_before" yaml:"failed_before"`
}

// NewCmd builds `queuectl purge`.
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Admin: f.Admin, Format: f.Format, Config: f.Config, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete delivered (DLVD) and failed (FAIL) messages older than their retention",
		Long: `Delete DLVD messages last changed more than engine.retention.delivered ago
(default 24h) and FAIL messages last changed more than
engine.retention.failed ago (default 720h), with their payloads and history;
--older-than sets one age for both. Messages in any other status — NDLV,
WAIT, HOLD, TBDL, DLNG, PEND — are never purged, however old.

'queuectl serve' purges in the background by the same rules; this command
does it now. Deletion runs in chunks of 1000, each with its audit entry.
--dry-run counts what would be purged and deletes nothing.`,
		Example: `  queuectl purge --dry-run
  queuectl purge --older-than 7d
  queuectl purge --older-than 2026-03-01T00:00:00Z -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.OlderThan, "older-than", "", "purge DLVD and FAIL messages last changed before this long ago (or this time); default: engine.retention")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "count what would be purged and delete nothing")
	cmdutil.Audited(cmd, "purge")
	return cmd
}

// Run purges and prints the counts.
func Run(ctx context.Context, opts *Options) error {
	now := opts.Now()
	p := admin.PurgeParams{DryRun: opts.DryRun}
	if opts.OlderThan != "" {
		cutoff, err := cmdutil.ParseAge("older-than", opts.OlderThan, now)
		if err != nil {
			return err
		}
		p.DeliveredBefore, p.FailedBefore = cutoff, cutoff
	} else {
		c, err := opts.Config()
		if err != nil {
			return err
		}
		ret := c.Engine.Retention
		if ret.Delivered <= 0 || ret.Failed <= 0 {
			return domain.Invalidf("engine.retention must be positive (delivered %s, failed %s); or give --older-than", ret.Delivered, ret.Failed)
		}
		p.DeliveredBefore, p.FailedBefore = now.Add(-ret.Delivered), now.Add(-ret.Failed)
	}
	format, err := opts.Format()
	if err != nil {
		return err
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	res, err := svc.Purge(ctx, p)
	if res == nil {
		return err
	}
	out := &Result{PurgeResult: res, DeliveredBefore: p.DeliveredBefore, FailedBefore: p.FailedBefore}
	perr := output.Value(opts.IO.Out, format, out, func(w io.Writer, _ bool) error {
		return printCounts(w, out)
	}, func() []string { return nil })
	if err != nil {
		return err
	}
	return perr
}

func printCounts(w io.Writer, r *Result) error {
	verb := "purged"
	if r.DryRun {
		verb = "would purge"
	}
	for _, c := range []struct {
		status domain.Status
		before time.Time
	}{{domain.StatusDLVD, r.DeliveredBefore}, {domain.StatusFAIL, r.FailedBefore}} {
		if _, err := fmt.Fprintf(w, "%s %s %s (last changed before %s)\n", verb, cmdutil.FormatCount(r.Counts[c.status]),
			c.status, output.Time(&c.before)); err != nil {
			return err
		}
	}
	if r.Queues > 0 {
		verb = "removed"
		if r.DryRun {
			verb = "would remove"
		}
		if _, err := fmt.Fprintf(w, "%s %s empty queues that no tuning value in force creates\n", verb, cmdutil.FormatCount(r.Queues)); err != nil {
			return err
		}
	}
	return nil
}
