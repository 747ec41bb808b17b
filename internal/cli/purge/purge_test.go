package purge_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/purge"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// purgeAdmin records the purge parameters and reports fixed counts.
type purgeAdmin struct {
	admin.Service
	params admin.PurgeParams
}

func (a *purgeAdmin) Purge(_ context.Context, p admin.PurgeParams) (*admin.PurgeResult, error) {
	a.params = p
	return &admin.PurgeResult{Counts: map[domain.Status]int{domain.StatusDLVD: 1204, domain.StatusFAIL: 3}, DryRun: p.DryRun}, nil
}

func setup(t *testing.T) (*purge.Options, *purgeAdmin, *bytes.Buffer) {
	t.Helper()
	a := &purgeAdmin{}
	out := &bytes.Buffer{}
	cfg := &config.Config{Engine: config.Engine{Retention: config.Retention{Delivered: 24 * time.Hour, Failed: 720 * time.Hour}}}
	return &purge.Options{
		IO:     &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: io.Discard},
		Admin:  func() (admin.Service, error) { return a, nil },
		Format: func() (output.Format, error) { return output.Table, nil },
		Config: func() (*config.Config, error) { return cfg, nil },
		Now:    func() time.Time { return now },
	}, a, out
}

func TestRunRetentionDefaults(t *testing.T) {
	t.Parallel()

	o, a, out := setup(t)
	o.DryRun = true
	require.NoError(t, purge.Run(context.Background(), o))
	require.Equal(t, admin.PurgeParams{DeliveredBefore: now.Add(-24 * time.Hour), FailedBefore: now.Add(-720 * time.Hour), DryRun: true}, a.params)
	require.Equal(t, ""+
		"would purge 1,204 DLVD (last changed before 2026-03-09T12:00:00Z)\n"+
		"would purge 3 FAIL (last changed before 2026-02-08T12:00:00Z)\n", out.String())
}

func TestRunOlderThan(t *testing.T) {
	t.Parallel()

	o, a, out := setup(t)
	o.OlderThan = "7d"
	require.NoError(t, purge.Run(context.Background(), o))
	require.Equal(t, now.Add(-7*24*time.Hour), a.params.DeliveredBefore, "--older-than sets both cutoffs")
	require.Equal(t, now.Add(-7*24*time.Hour), a.params.FailedBefore)
	require.False(t, a.params.DryRun)
	require.Contains(t, out.String(), "purged 1,204 DLVD")

	o, _, _ = setup(t)
	o.OlderThan = "-1h"
	require.ErrorIs(t, purge.Run(context.Background(), o), domain.ErrInvalid)
}
