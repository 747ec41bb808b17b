package message_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

type newActCmd func(*cmdutil.Factory, func(context.Context, *message.ActOptions) error) *cobra.Command

func parseActFlags(t *testing.T, build newActCmd, args ...string) (*message.ActOptions, error) {
	t.Helper()
	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var got *message.ActOptions
	cmd := build(f, func(_ context.Context, o *message.ActOptions) error {
		got = o
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return got, cmd.Execute()
}

func TestActFlags(t *testing.T) {
	t.Parallel()

	o, err := parseActFlags(t, message.NewResendCmd, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a", "--dry-run")
	require.NoError(t, err)
	require.Equal(t, admin.ActResend, o.Action)
	require.Equal(t, []string{"0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a"}, o.Args)
	require.True(t, o.DryRun)
	require.True(t, o.AllowAll)
	require.Empty(t, o.FilterFlags)

	o, err = parseActFlags(t, message.NewResendCmd, "--all", "-y", "--status", "WAIT", "--receiver", "CRM", "--older-than", "1h")
	require.NoError(t, err)
	require.True(t, o.All)
	require.True(t, o.Yes)
	require.Equal(t, []string{"WAIT"}, o.Statuses)
	require.Equal(t, []string{"--status", "--receiver", "--older-than"}, o.FilterFlags, "the filters given, for the rule that they need --all")

	o, err = parseActFlags(t, message.NewFailCmd, "-", "--reason", "booked by hand")
	require.NoError(t, err)
	require.Equal(t, admin.ActFail, o.Action)
	require.Equal(t, []string{"-"}, o.Args)
	require.Equal(t, "booked by hand", o.Reason)

	_, err = parseActFlags(t, message.NewResendCmd, "--reason", "x")
	require.Error(t, err, "resend takes no --reason")
}

// actAdmin records the filter of the --all walk and the actions.
type actAdmin struct {
	admin.Service
	filter  admin.MessageFilter
	filters []admin.MessageFilter
	acts    []admin.ActParams
}

func (a *actAdmin) Messages(_ context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	a.filter = f
	a.filters = append(a.filters, f)
	return fn(&domain.Message{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f"})
}

func (a *actAdmin) Act(_ context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	a.acts = append(a.acts, p)
	res := admin.NewBulkResult()
	res.Changed, res.ChangedIDs = len(p.Targets), p.Targets
	return res, nil
}

func setupAct(t *testing.T, action admin.Action) (*message.ActOptions, *actAdmin, *bytes.Buffer) {
	t.Helper()
	a := &actAdmin{}
	out := &bytes.Buffer{}
	o := &message.ActOptions{
		BulkOptions: cmdutil.BulkOptions{
			IO:       &cmdutil.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: io.Discard},
			Admin:    func() (admin.Service, error) { return a, nil },
			Format:   func() (output.Format, error) { return output.Table, nil },
			Hintf:    func(string, ...any) {},
			AllowAll: true,
		},
		Now:    func() time.Time { return now },
		Action: action,
	}
	return o, a, out
}

func TestRunActAllStatuses(t *testing.T) {
	t.Parallel()

	o, a, out := setupAct(t, admin.ActFail)
	o.All, o.Yes, o.Reason = true, true, "cleanup"
	o.Receivers, o.OlderThan = []string{"SHIPPING"}, "7d"
	require.NoError(t, message.RunAct(context.Background(), o))
	require.Equal(t, []domain.Status{domain.StatusHOLD}, a.filters[0].Statuses,
		"without --status, --all selects what fail applies to: HOLD first...")
	require.Equal(t, []domain.Status{domain.StatusNDLV, domain.StatusWAIT}, a.filters[1].Statuses, "...then the rest")
	require.Equal(t, []string{"SHIPPING"}, a.filter.Receivers)
	require.Equal(t, now.Add(-7*24*time.Hour), a.filter.OlderThan)
	require.Len(t, a.acts, 2, "one walk each, and the fake finds one message in each")
	require.Equal(t, "cleanup", a.acts[0].Reason)
	require.Equal(t, "changed 2: fail NDLV/WAIT/HOLD → FAIL\n", out.String())

	o, a, _ = setupAct(t, admin.ActResend)
	o.All, o.Yes, o.Statuses = true, true, []string{"wait"}
	require.NoError(t, message.RunAct(context.Background(), o))
	require.Equal(t, []domain.Status{domain.StatusWAIT}, a.filter.Statuses)

	o, a, _ = setupAct(t, admin.ActResend)
	o.All, o.Yes, o.Statuses = true, true, []string{"NDLV,HOLD"}
	err := message.RunAct(context.Background(), o)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.EqualError(t, err, "--status HOLD: resend applies only to NDLV, WAIT messages")
	require.Empty(t, a.acts)
}

// blockedQueue is an admin service over one blocked EOIO queue: an NDLV head
// and HOLD messages behind it. Failing the head releases the HOLD messages
// still there to TBDL at the end of each call, as the local service does.
type blockedQueue struct {
	admin.Service
	status map[string]domain.Status
	ids    []string
}

func newBlockedQueue(held int) *blockedQueue {
	q := &blockedQueue{status: map[string]domain.Status{}}
	for i := range held + 1 {
		id := fmt.Sprintf("0193a5c4-7b1e-7c3d-9f5e-%012d", i)
		q.ids = append(q.ids, id)
		q.status[id] = domain.StatusHOLD
	}
	q.status[q.ids[0]] = domain.StatusNDLV
	return q
}

func (q *blockedQueue) Messages(_ context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	for _, id := range q.ids {
		if id > f.After && slices.Contains(f.Statuses, q.status[id]) {
			if err := fn(&domain.Message{ID: id, Status: q.status[id]}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (q *blockedQueue) Act(_ context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	res := admin.NewBulkResult()
	for _, id := range p.Targets {
		if st := q.status[id]; st != domain.StatusNDLV && st != domain.StatusHOLD {
			res.Skipped = append(res.Skipped, admin.Skipped{ID: id, Status: st, Reason: "status is " + string(st)})
			continue
		}
		q.status[id] = domain.StatusFAIL
		res.Changed++
	}
	if q.status[q.ids[0]] == domain.StatusFAIL {
		for _, id := range q.ids {
			if q.status[id] == domain.StatusHOLD {
				q.status[id] = domain.StatusTBDL
			}
		}
	}
	return res, nil
}

func TestRunActFailAllOfABlockedQueue(t *testing.T) {
	t.Parallel()

	q := newBlockedQueue(2 * cmdutil.BulkChunk)
	o, _, out := setupAct(t, admin.ActFail)
	o.Admin = func() (admin.Service, error) { return q, nil }
	o.All, o.Yes = true, true
	require.NoError(t, message.RunAct(context.Background(), o),
		"the held messages are failed before the head, so failing the head releases none of them")
	require.Equal(t, "changed 2,001: fail NDLV/WAIT/HOLD → FAIL\n", out.String())
	for _, id := range q.ids {
		require.Equal(t, domain.StatusFAIL, q.status[id], id)
	}
}
