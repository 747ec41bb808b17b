package message_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/message"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store"
	"github.com/queuectl/queuectl/internal/store/bolt"
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
	if p.Select != nil {
		res.Changed = 1
	}
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
	require.Equal(t, []domain.Status{domain.StatusNDLV, domain.StatusWAIT, domain.StatusHOLD}, a.filter.Statuses,
		"without --status, --all selects what fail applies to")
	require.Equal(t, []string{"SHIPPING"}, a.filter.Receivers)
	require.Equal(t, now.Add(-7*24*time.Hour), a.filter.OlderThan)
	require.Len(t, a.acts, 1, "the count, then one action on the selection")
	require.Equal(t, a.filter, *a.acts[0].Select.Messages, "the service selects what was counted")
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1f", a.acts[0].Select.Last)
	require.Equal(t, "cleanup", a.acts[0].Reason)
	require.Equal(t, "changed 1: fail NDLV/WAIT/HOLD → FAIL\n", out.String())

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

// TestRunActFailAllOfABlockedQueue: message fail --all over a blocked EOIO
// queue with more HOLD messages than a batch fails every one of them, on a
// real store: one action, the HOLD rule restored once at its end.
func TestRunActFailAllOfABlockedQueue(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	send := func(n int) []*domain.Message {
		reqs := make([]domain.SendRequest, n)
		for i := range reqs {
			reqs[i] = domain.SendRequest{QoS: domain.EOIO, Sender: "ERP", Receivers: []string{"WMS"}, AppQueue: "ORDERS", Payload: []byte("x")}
		}
		sent, err := svc.Send(ctx, reqs)
		require.NoError(t, err)
		return admin.SentMessages(sent)
	}
	head := send(1)[0]
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		for _, to := range []domain.Status{domain.StatusDLNG, domain.StatusNDLV} {
			if _, err := w.Transition(store.TransitionParams{ID: head.ID, From: []domain.Status{domain.StatusTBDL, domain.StatusDLNG}, To: to,
				Update: func(m *domain.Message) { m.Error, m.ErrorClass = "HTTP 422", domain.ErrorPermanent }}); err != nil {
				return err
			}
		}
		return nil
	}))
	held := send(2 * cmdutil.BulkChunk)
	require.Equal(t, domain.StatusHOLD, held[0].Status)

	o, _, out := setupAct(t, admin.ActFail)
	o.Admin = func() (admin.Service, error) { return svc, nil }
	o.All, o.Yes, o.Queues = true, true, []string{head.Queue}
	require.NoError(t, message.RunAct(ctx, o))
	require.Equal(t, "changed 2,001: fail NDLV/WAIT/HOLD → FAIL\n", out.String())
	q, err := svc.Queue(ctx, head.Queue)
	require.NoError(t, err)
	require.Equal(t, map[domain.Status]int64{domain.StatusFAIL: 2001}, q.Counts, "none was released for delivery")
}

// TestRunResendAllAsksWithTheBlacklistedApart: on a terminal, resend --all
// says how many blacklisted messages it leaves alone before it asks, and
// with --include-blacklisted names them in the question.
func TestRunResendAllAsksWithTheBlacklistedApart(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	sent, err := svc.Send(ctx, []domain.SendRequest{
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("x")},
		{QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"}, Payload: []byte("poison")},
	})
	require.NoError(t, err)
	msgs := admin.SentMessages(sent)
	require.NoError(t, st.Update(ctx, func(w store.Writer) error {
		for i, m := range msgs {
			for _, to := range []domain.Status{domain.StatusDLNG, domain.StatusNDLV} {
				_, err := w.Transition(store.TransitionParams{ID: m.ID, From: []domain.Status{domain.StatusTBDL, domain.StatusDLNG}, To: to,
					Update: func(m *domain.Message) {
						m.Error, m.ErrorClass = "HTTP 422", domain.ErrorPermanent
						if i == 1 {
							m.Crashes, m.Blacklisted, m.ErrorClass = 2, true, domain.ErrorCrash
						}
					}})
				if err != nil {
					return err
				}
			}
		}
		return nil
	}))
	ask := func(include bool, answer string) (string, string) {
		o, _, out := setupAct(t, admin.ActResend)
		errOut := &bytes.Buffer{}
		o.IO = &cmdutil.IOStreams{In: bytes.NewBufferString(answer), Out: out, ErrOut: errOut, StdinTTY: true}
		o.Admin = func() (admin.Service, error) { return svc, nil }
		o.All, o.IncludeBlacklisted = true, include
		_ = message.RunAct(ctx, o)
		return errOut.String(), out.String()
	}

	prompt, _ := ask(false, "n\n")
	require.Equal(t, "queuectl: 1 blacklisted message is left alone: release with 'queuectl blacklist release', or add --include-blacklisted\n"+
		"Resend 1 message? [y/N] ", prompt)
	prompt, _ = ask(true, "n\n")
	require.Equal(t, "Resend 2 messages, 1 of them blacklisted (crashes are reset to 0)? [y/N] ", prompt)

	_, out := ask(false, "y\n")
	require.Equal(t, "changed 1: resend NDLV/WAIT → TBDL\n"+
		"1 blacklisted message is left alone: release with 'queuectl blacklist release', or add --include-blacklisted\n", out)
	poison, err := svc.Message(ctx, msgs[1].ID)
	require.NoError(t, err)
	require.Equal(t, domain.StatusNDLV, poison.Status, "left alone")
	require.True(t, poison.Blacklisted)
}
