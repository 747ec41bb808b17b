package cmdutil_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/local"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
	"github.com/queuectl/queuectl/internal/store/bolt"
)

// bulkAdmin is an admin service over a fixed set of messages by id and
// status. Act resends (NDLV → TBDL) as the local service does, per target;
// it records every call and fails the test if it is called while a walk of
// Messages is open.
type bulkAdmin struct {
	admin.Service
	t        *testing.T
	statuses map[string]domain.Status
	calls    [][]string
	params   []admin.ActParams
	walking  bool
	// onCount, if set, runs after the first complete walk (the count).
	onCount func()
	// onAct, if set, runs at the start of every Act.
	onAct func()
	walks int
}

func newBulkAdmin(t *testing.T, n int, status domain.Status) *bulkAdmin {
	a := &bulkAdmin{t: t, statuses: map[string]domain.Status{}}
	for i := range n {
		a.statuses[testID(i)] = status
	}
	return a
}

// testID returns the i-th of a series of ids in ascending order.
func testID(i int) string { return fmt.Sprintf("0193a5c4-7b1e-7c3d-9f5e-%012d", i) }

func (a *bulkAdmin) Messages(_ context.Context, f admin.MessageFilter, fn func(*domain.Message) error) error {
	a.walking = true
	defer func() { a.walking = false }()
	ids := make([]string, 0, len(a.statuses))
	for id := range a.statuses {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if id <= f.After || (len(f.Statuses) > 0 && !slices.Contains(f.Statuses, a.statuses[id])) {
			continue
		}
		if err := fn(&domain.Message{ID: id, Status: a.statuses[id]}); err != nil {
			return err
		}
	}
	if a.walks++; a.walks == 1 && a.onCount != nil {
		a.onCount()
	}
	return nil
}

func (a *bulkAdmin) Act(ctx context.Context, p admin.ActParams) (*admin.BulkResult, error) {
	require.False(a.t, a.walking, "Act was called inside a walk of Messages")
	if a.onAct != nil {
		a.onAct()
	}
	a.params = append(a.params, p)
	if p.Select != nil {
		// What the service selects: the filter's messages up to Last.
		var sel []string
		require.NoError(a.t, a.Messages(ctx, *p.Select.Messages, func(m *domain.Message) error {
			if m.ID <= p.Select.Last {
				sel = append(sel, m.ID)
			}
			return nil
		}))
		p.Targets = sel
	}
	for _, id := range p.Targets {
		if err := domain.ValidID(id); err != nil {
			return nil, fmt.Errorf("%w; nothing was changed", err)
		}
	}
	a.calls = append(a.calls, slices.Clone(p.Targets))
	res := admin.NewBulkResult()
	res.DryRun = p.DryRun
	for _, id := range p.Targets {
		st, ok := a.statuses[id]
		switch {
		case !ok:
			res.NotFound = append(res.NotFound, id)
		case st != domain.StatusNDLV:
			res.Skipped = append(res.Skipped, admin.Skipped{ID: id, Status: st, Reason: "status is " + string(st) + "; message.resend needs NDLV or WAIT"})
		default:
			if !p.DryRun {
				a.statuses[id] = domain.StatusTBDL
			}
			res.Changed++
			res.ChangedIDs = append(res.ChangedIDs, id)
		}
	}
	return res, nil
}

type bulkBundle struct {
	admin  *bulkAdmin
	opts   *cmdutil.BulkOptions
	action *cmdutil.BulkAction
	out    *bytes.Buffer
	errOut *bytes.Buffer
	hints  []string
	opened bool
}

func setupBulk(t *testing.T, a *bulkAdmin, format output.Format, stdin string) *bulkBundle {
	t.Helper()
	b := &bulkBundle{admin: a, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	b.opts = &cmdutil.BulkOptions{
		IO: &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: b.out, ErrOut: b.errOut},
		Admin: func() (admin.Service, error) {
			b.opened = true
			return a, nil
		},
		Format:   func() (output.Format, error) { return format, nil },
		Hintf:    func(f string, args ...any) { b.hints = append(b.hints, fmt.Sprintf(f, args...)) },
		AllowAll: true,
	}
	b.action = &cmdutil.BulkAction{
		Action: admin.ActResend, Verb: "resend", Change: "NDLV/WAIT → TBDL", Noun: "message",
		Select: &admin.Selection{Messages: &admin.MessageFilter{Statuses: []domain.Status{domain.StatusNDLV}}},
	}
	return b
}

func (b *bulkBundle) run(t *testing.T) error {
	t.Helper()
	return cmdutil.RunBulk(context.Background(), b.action, b.opts)
}

func TestBulkArgsAllChanged(t *testing.T) {
	t.Parallel()

	b := setupBulk(t, newBulkAdmin(t, 3, domain.StatusNDLV), output.Table, "")
	b.opts.Args = []string{testID(0), testID(1), testID(2)}
	require.NoError(t, b.run(t))
	require.Equal(t, "changed 3: resend NDLV/WAIT → TBDL\n", b.out.String())
	require.Len(t, b.admin.calls, 1, "explicit ids go to the service in one call")
	require.Empty(t, b.errOut.String(), "explicit ids need no confirmation")
}

func TestBulkExitKinds(t *testing.T) {
	t.Parallel()

	a := newBulkAdmin(t, 2, domain.StatusNDLV)
	a.statuses[testID(1)] = domain.StatusDLVD
	missing := testID(99)
	tests := []struct {
		name    string
		targets []string
		kind    error
		table   string
	}{
		{"partial", []string{testID(0), testID(1), missing}, cmdutil.ErrPartial, "" +
			"changed 1 of 3: resend NDLV/WAIT → TBDL\n" +
			"skipped " + testID(1) + " (DLVD): status is DLVD; message.resend needs NDLV or WAIT\n" +
			"not found " + missing + "\n"},
		{"conflict", []string{testID(1), missing}, domain.ErrConflict, "" +
			"changed 0 of 2: resend NDLV/WAIT → TBDL\n" +
			"skipped " + testID(1) + " (DLVD): status is DLVD; message.resend needs NDLV or WAIT\n" +
			"not found " + missing + "\n"},
		{"not found", []string{missing}, domain.ErrNotFound, "" +
			"changed 0 of 1: resend NDLV/WAIT → TBDL\n" +
			"not found " + missing + "\n"},
	}
	for _, tt := range tests {
		a.statuses[testID(0)] = domain.StatusNDLV
		b := setupBulk(t, a, output.Table, "")
		b.opts.Args = tt.targets
		err := b.run(t)
		require.ErrorIs(t, err, tt.kind, tt.name)
		require.Equal(t, tt.table, b.out.String(), tt.name)
		var printed interface{ Printed() bool }
		require.ErrorAs(t, err, &printed, "%s: the result explains the exit code; it is not printed again", tt.name)
	}
}

func TestBulkJSON(t *testing.T) {
	t.Parallel()

	a := newBulkAdmin(t, 2, domain.StatusNDLV)
	a.statuses[testID(1)] = domain.StatusWAIT
	b := setupBulk(t, a, output.JSON, "")
	b.opts.Args = []string{testID(0), testID(1), testID(7)}
	require.ErrorIs(t, b.run(t), cmdutil.ErrPartial)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b.out.Bytes(), &got), b.out.String())
	require.Equal(t, map[string]any{
		"changed":     float64(1),
		"changed_ids": []any{testID(0)},
		"skipped":     []any{map[string]any{"id": testID(1), "status": "WAIT", "reason": "status is WAIT; message.resend needs NDLV or WAIT"}},
		"not_found":   []any{testID(7)},
	}, got, "the bulk result of §5")

	b = setupBulk(t, a, output.JSONL, "")
	b.opts.Args = []string{testID(1)}
	require.ErrorIs(t, b.run(t), domain.ErrConflict)
	require.Equal(t, 1, strings.Count(b.out.String(), "\n"), "jsonl: the object on one line")
}

func TestBulkIDs(t *testing.T) {
	t.Parallel()

	a := newBulkAdmin(t, 3, domain.StatusNDLV)
	a.statuses[testID(2)] = domain.StatusDLVD
	b := setupBulk(t, a, output.IDs, "")
	b.opts.Args = []string{testID(0), testID(1), testID(2)}
	require.ErrorIs(t, b.run(t), cmdutil.ErrPartial)
	require.Equal(t, testID(0)+"\n"+testID(1)+"\n", b.out.String(), "the changed ids, for the next pipe")
	require.Contains(t, b.errOut.String(), "skipped "+testID(2)+" (DLVD)", "what did not change goes to stderr")
}

func TestBulkStdinStreamsInChunks(t *testing.T) {
	t.Parallel()

	const n = 2*cmdutil.BulkChunk + 500
	a := newBulkAdmin(t, n, domain.StatusNDLV)
	var in strings.Builder
	for i := range n {
		in.WriteString(testID(i))
		if i%3 == 0 {
			in.WriteString(" ") // whitespace or newline separated
		} else {
			in.WriteString("\n")
		}
	}
	in.WriteString(strings.ToUpper(testID(0)) + "\n") // a repeat, in another case
	b := setupBulk(t, a, output.Table, in.String())
	b.opts.Args = []string{"-"}
	require.NoError(t, b.run(t))
	require.Len(t, b.admin.calls, 3)
	require.Len(t, b.admin.calls[0], cmdutil.BulkChunk)
	require.Len(t, b.admin.calls[1], cmdutil.BulkChunk)
	require.Len(t, b.admin.calls[2], 500, "the repeated id is applied once")
	require.Equal(t, "changed 2,500: resend NDLV/WAIT → TBDL\n", b.out.String())
}

func TestBulkStdinIDsStream(t *testing.T) {
	t.Parallel()

	const n = cmdutil.BulkChunk + 1
	a := newBulkAdmin(t, n, domain.StatusNDLV)
	var in strings.Builder
	for i := range n {
		fmt.Fprintln(&in, testID(i))
	}
	b := setupBulk(t, a, output.IDs, in.String())
	b.opts.Args = []string{"-"}
	var printedBefore []int
	a.onAct = func() { printedBefore = append(printedBefore, strings.Count(b.out.String(), "\n")) }
	require.NoError(t, b.run(t))
	require.Equal(t, []int{0, cmdutil.BulkChunk}, printedBefore, "-o ids prints each chunk's ids as soon as it is applied")
	require.Equal(t, n, strings.Count(b.out.String(), "\n"))
}

func TestBulkStdinMalformed(t *testing.T) {
	t.Parallel()

	a := newBulkAdmin(t, cmdutil.BulkChunk+1, domain.StatusNDLV)
	var in strings.Builder
	for i := range cmdutil.BulkChunk + 1 {
		fmt.Fprintln(&in, testID(i))
	}
	in.WriteString("XBTI0000\n")
	b := setupBulk(t, a, output.Table, in.String())
	b.opts.Args = []string{"-"}
	err := b.run(t)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `stdin, message id 1002: message id "XBTI0000" is not a UUID`)
	require.ErrorContains(t, err, "the 1000 before it were applied")
	require.Len(t, b.admin.calls, 1, "the chunk with the bad id is not applied")
	require.Len(t, b.admin.params, 2, "the bad id alone goes to the service, which refuses and audits it")
	require.Equal(t, []string{"XBTI0000"}, b.admin.params[1].Targets)
	require.Equal(t, "changed 1,000: resend NDLV/WAIT → TBDL\n", b.out.String(), "what was applied is printed")

	b = setupBulk(t, newBulkAdmin(t, 1, domain.StatusNDLV), output.Table, testID(0)+"\nnot-an-id\n")
	b.opts.Args = []string{"-"}
	err = b.run(t)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "nothing was changed")
	require.Empty(t, b.admin.calls)
	require.Empty(t, b.out.String())
}

// TestBulkStdinMalformedIsAudited: on a real service, a malformed id from
// stdin is in the audit log as a refusal, as one given as an argument is.
func TestBulkStdinMalformedIsAudited(t *testing.T) {
	t.Parallel()

	st, err := bolt.Open(filepath.Join(t.TempDir(), "q.db"), bolt.Options{NoSync: true})
	require.NoError(t, err)
	svc := local.New(st, local.Options{})
	t.Cleanup(func() { require.NoError(t, svc.Close()) })
	b := setupBulk(t, nil, output.Table, "not-an-id\n")
	b.opts.Admin = func() (admin.Service, error) { return svc, nil }
	b.opts.Args = []string{"-"}
	require.ErrorIs(t, b.run(t), domain.ErrInvalid)
	var log []*domain.AuditEntry
	require.NoError(t, svc.Audit(context.Background(), admin.AuditFilter{}, func(e *domain.AuditEntry) error {
		log = append(log, e)
		return nil
	}))
	require.Len(t, log, 1)
	require.Equal(t, []string{"not-an-id"}, log[0].Targets)
	require.Equal(t, domain.AuditError, log[0].Result)
}

func TestBulkStdinEmpty(t *testing.T) {
	t.Parallel()

	b := setupBulk(t, newBulkAdmin(t, 0, domain.StatusNDLV), output.Table, "\n  \n")
	b.opts.Args = []string{"-"}
	require.NoError(t, b.run(t), "an empty pipe is nothing to do, not an error")
	require.Empty(t, b.out.String())
	require.Equal(t, []string{"no message ids on stdin; nothing to resend"}, b.hints)

	b = setupBulk(t, newBulkAdmin(t, 0, domain.StatusNDLV), output.JSON, "")
	b.opts.Args = []string{"-"}
	require.NoError(t, b.run(t))
	require.JSONEq(t, `{"changed":0,"changed_ids":[],"skipped":[],"not_found":[]}`, b.out.String())
}

// TestBulkAllIsOneAction: --all counts, then has the service act on the
// selection up to the last target counted, in one call, whatever its size.
func TestBulkAllIsOneAction(t *testing.T) {
	t.Parallel()

	const n = cmdutil.BulkChunk + 10
	a := newBulkAdmin(t, n, domain.StatusNDLV)
	a.statuses[testID(n+1)] = domain.StatusDLVD // not selected
	// A message that turns up after the count is left alone.
	a.onCount = func() { a.statuses[testID(n+5)] = domain.StatusNDLV }
	b := setupBulk(t, a, output.Table, "")
	b.opts.All, b.opts.Yes = true, true
	require.NoError(t, b.run(t))
	require.Len(t, a.params, 1, "one action")
	p := a.params[0]
	require.Equal(t, testID(n-1), p.Select.Last, "bounded by the count")
	require.Equal(t, []domain.Status{domain.StatusNDLV}, p.Select.Messages.Statuses)
	require.True(t, p.CountOnly, "a table prints a summary: no changed ids needed")
	require.Len(t, a.calls[0], n)
	require.Equal(t, domain.StatusNDLV, a.statuses[testID(n+5)], "counted before it arrived, so not resent")
	require.Equal(t, "changed 1,010: resend NDLV/WAIT → TBDL\n", b.out.String())

	// -o ids needs the changed ids.
	a = newBulkAdmin(t, 3, domain.StatusNDLV)
	b = setupBulk(t, a, output.IDs, "")
	b.opts.All, b.opts.Yes = true, true
	require.NoError(t, b.run(t))
	require.False(t, a.params[0].CountOnly)
	require.Equal(t, testID(0)+"\n"+testID(1)+"\n"+testID(2)+"\n", b.out.String())
}

func TestBulkAllNoMatch(t *testing.T) {
	t.Parallel()

	b := setupBulk(t, newBulkAdmin(t, 2, domain.StatusDLVD), output.Table, "")
	b.opts.All, b.opts.Yes = true, true
	require.NoError(t, b.run(t))
	require.Empty(t, b.out.String())
	require.Equal(t, []string{"no messages match; nothing to resend"}, b.hints)
	require.Empty(t, b.admin.calls)
}

func TestBulkAllNeedsYesOffTerminal(t *testing.T) {
	t.Parallel()

	b := setupBulk(t, newBulkAdmin(t, 2, domain.StatusNDLV), output.Table, "y\n")
	b.opts.All = true
	err := b.run(t)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "--all needs --yes")
	require.ErrorContains(t, err, "nothing was changed")
	require.False(t, b.opened, "refused before the store is opened")

	b = setupBulk(t, newBulkAdmin(t, 2, domain.StatusNDLV), output.Table, "")
	b.opts.All, b.opts.DryRun = true, true
	require.NoError(t, b.run(t), "a dry run changes nothing, so it needs no --yes")
	require.Equal(t, "would change 2: resend NDLV/WAIT → TBDL\n", b.out.String())
	require.Equal(t, domain.StatusNDLV, b.admin.statuses[testID(0)])
}

func TestBulkAllConfirmsOnTerminal(t *testing.T) {
	t.Parallel()

	a := newBulkAdmin(t, 1204, domain.StatusNDLV)
	b := setupBulk(t, a, output.Table, "n\n")
	b.opts.All, b.opts.IO.StdinTTY = true, true
	b.action.Verb = "release"
	err := b.run(t)
	require.ErrorContains(t, err, "aborted; nothing was changed")
	require.Equal(t, "Release 1,204 messages? [y/N] ", b.errOut.String())
	require.Empty(t, a.calls)

	b = setupBulk(t, a, output.Table, "yes\n")
	b.opts.All, b.opts.IO.StdinTTY = true, true
	require.NoError(t, b.run(t))
	require.Equal(t, "Resend 1,204 messages? [y/N] ", b.errOut.String())
	require.Len(t, a.calls, 1)
}

func TestBulkUsageErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		set  func(o *cmdutil.BulkOptions)
		want string
	}{
		{"none", func(o *cmdutil.BulkOptions) {}, "no message ids to resend"},
		{"ids and --all", func(o *cmdutil.BulkOptions) { o.Args, o.All = []string{testID(0)}, true }, "give message ids or --all, not both"},
		{"- and --all", func(o *cmdutil.BulkOptions) { o.Args, o.All = []string{"-"}, true }, "not both"},
		{"- and ids", func(o *cmdutil.BulkOptions) { o.Args = []string{testID(0), "-"} }, "- reads the message ids from stdin; give it alone"},
		{"only filters", func(o *cmdutil.BulkOptions) { o.FilterFlags = []string{"--receiver"} },
			"no message ids to resend: --receiver selects messages only with --all"},
		{"filters without --all", func(o *cmdutil.BulkOptions) {
			o.Args, o.FilterFlags = []string{testID(0)}, []string{"--status", "--queue"}
		}, "--status, --queue selects messages for --all"},
	}
	for _, tt := range tests {
		b := setupBulk(t, newBulkAdmin(t, 1, domain.StatusNDLV), output.Table, "")
		tt.set(b.opts)
		err := b.run(t)
		require.ErrorIs(t, err, domain.ErrInvalid, tt.name)
		require.ErrorContains(t, err, tt.want, tt.name)
		require.NotEmpty(t, domain.HintOf(err), "%s: a hint says what to give", tt.name)
		require.False(t, b.opened, "%s: checked before the store is opened", tt.name)
	}
}

func TestBulkRefusedIDs(t *testing.T) {
	t.Parallel()

	b := setupBulk(t, newBulkAdmin(t, 1, domain.StatusNDLV), output.Table, "")
	b.opts.Args = []string{testID(0), "42"}
	err := b.run(t)
	require.ErrorIs(t, err, domain.ErrInvalid, "the service refuses a malformed id")
	require.ErrorContains(t, err, "nothing was changed")
	require.Empty(t, b.out.String(), "no result to print")
}

func TestActionStatuses(t *testing.T) {
	t.Parallel()

	applies := []domain.Status{domain.StatusNDLV, domain.StatusWAIT}
	got, err := cmdutil.ActionStatuses(nil, applies, "resend")
	require.NoError(t, err)
	require.Equal(t, applies, got, "without --status: what the action applies to")
	got, err = cmdutil.ActionStatuses([]domain.Status{domain.StatusWAIT}, applies, "resend")
	require.NoError(t, err)
	require.Equal(t, []domain.Status{domain.StatusWAIT}, got)
	_, err = cmdutil.ActionStatuses([]domain.Status{domain.StatusWAIT, domain.StatusDLVD}, applies, "resend")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.EqualError(t, err, "--status DLVD: resend applies only to NDLV, WAIT messages")
}

func TestFormatCount(t *testing.T) {
	t.Parallel()

	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1204: "1,204", 100000: "100,000", 1234567: "1,234,567", -1204: "-1,204"} {
		require.Equal(t, want, cmdutil.FormatCount(n))
	}
}
