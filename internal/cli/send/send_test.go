package send_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/send"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// parseFlags runs `send args...` with a run function that only keeps the
// options, so that flag parsing is tested apart from sending.
func parseFlags(t *testing.T, args ...string) (*send.Options, error) {
	t.Helper()
	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var got *send.Options
	cmd := send.NewCmd(f, func(_ context.Context, o *send.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return got, cmd.Execute()
}

func TestSendFlags(t *testing.T) {
	t.Parallel()

	o, err := parseFlags(t, "--qos", "EOIO", "--sender", "ERP", "--receiver", "WMS", "--receiver", "ARCHIVE",
		"--app-queue", "ORDERS_DE", "--interface", "OrderCreate", "--header", "X-Trace=a,b", "--header", "X-Env=prod",
		"--file", "order.xml", "--prepare")
	require.NoError(t, err)
	require.Equal(t, "EOIO", o.QoS)
	require.Equal(t, "ERP", o.Sender)
	require.Equal(t, []string{"WMS", "ARCHIVE"}, o.Receivers, "--receiver repeats")
	require.Equal(t, "ORDERS_DE", o.AppQueue)
	require.Equal(t, "OrderCreate", o.Interface)
	require.Equal(t, []string{"X-Trace=a,b", "X-Env=prod"}, o.Headers, "a header value may hold commas")
	require.Equal(t, "order.xml", o.File)
	require.True(t, o.Prepare)
	require.False(t, o.JSONL)
	require.NotNil(t, o.IO)
	require.NotNil(t, o.Admin)
	require.NotNil(t, o.Format)

	o, err = parseFlags(t, "--jsonl")
	require.NoError(t, err)
	require.True(t, o.JSONL)
	require.Empty(t, o.QoS)
	require.Nil(t, o.Receivers)
	require.Nil(t, o.Headers)
	require.False(t, o.Prepare)
}

func TestSendArgsAreUsageErrors(t *testing.T) {
	t.Parallel()

	_, err := parseFlags(t, "--qos", "EO", "--sender", "ERP", "order.xml")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `takes no arguments, got "order.xml"`)
	require.Equal(t, "to send a file's content: --file order.xml (or < order.xml)", domain.HintOf(err))
}

// fakeAdmin is an admin service whose Send records its requests.
type fakeAdmin struct {
	admin.Service // other methods are not called by send
	reqs          []domain.SendRequest
	err           error
	// okCalls Sends succeed before err, when it is set.
	okCalls int
	calls   int
	opened  int
	// repeat answers every request as a repeat of its key.
	repeat bool
}

func (a *fakeAdmin) Send(_ context.Context, reqs []domain.SendRequest) ([]admin.Sent, error) {
	a.reqs = append(a.reqs, reqs...)
	a.calls++
	if a.err != nil && a.calls > a.okCalls {
		return nil, a.err
	}
	out := make([]admin.Sent, len(reqs))
	for i, r := range reqs {
		out[i].Message = &domain.Message{ID: "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1" + string(rune('a'+i)), QoS: r.QoS, Sender: r.Sender,
			Key: r.Key, Status: domain.StatusTBDL}
		out[i].Duplicate = a.repeat
	}
	return out, nil
}

type runBundle struct {
	opts  *send.Options
	admin *fakeAdmin
	out   *bytes.Buffer
	dir   string
	hints []string
}

func setupRun(t *testing.T, format output.Format, stdin string) *runBundle {
	t.Helper()
	b := &runBundle{admin: &fakeAdmin{}, out: &bytes.Buffer{}, dir: t.TempDir()}
	b.opts = &send.Options{
		IO: &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: b.out, ErrOut: io.Discard},
		Admin: func() (admin.Service, error) {
			b.admin.opened++
			return b.admin, nil
		},
		Format:       func() (output.Format, error) { return format, nil },
		Hintf:        func(f string, args ...any) { b.hints = append(b.hints, fmt.Sprintf(f, args...)) },
		PayloadLimit: func(context.Context) (int64, error) { return domain.DefaultMaxPayload, nil },
	}
	return b
}

func TestSendRun(t *testing.T) {
	t.Parallel()

	b := setupRun(t, output.Table, "<order id=\"4711\"/>\n")
	b.opts.QoS, b.opts.Sender, b.opts.Receivers = "eo", "ERP", []string{"WMS"}
	b.opts.Headers = []string{"X-Trace=a=b", "X-Empty="}
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Equal(t, []domain.SendRequest{{
		QoS: domain.EO, Sender: "ERP", Receivers: []string{"WMS"},
		Headers: map[string]string{"X-Trace": "a=b", "X-Empty": ""},
		Payload: []byte("<order id=\"4711\"/>\n"),
	}}, b.admin.reqs, "payload from stdin, byte for byte")
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a\n", b.out.String(), "a table send prints just the id")
}

func TestSendRunFile(t *testing.T) {
	t.Parallel()

	b := setupRun(t, output.JSON, "not this")
	p := filepath.Join(b.dir, "order.bin")
	require.NoError(t, os.WriteFile(p, []byte{0, 1, 2}, 0o600))
	b.opts.QoS, b.opts.Sender, b.opts.File = "EO", "ERP", p
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Equal(t, []byte{0, 1, 2}, b.admin.reqs[0].Payload)
	require.True(t, strings.HasPrefix(b.out.String(), "{\n"), "-o json prints the stored message as one object")
	require.Contains(t, b.out.String(), `"id": "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a"`)
}

func TestSendRunUsageErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name string
		set  func(o *send.Options)
		want string
	}{
		{"no qos", func(o *send.Options) { o.Sender = "ERP" }, "--qos is required"},
		{"bad qos", func(o *send.Options) { o.QoS, o.Sender = "XO", "ERP" }, `"XO"`},
		{"no sender", func(o *send.Options) { o.QoS = "EO" }, "sender is required"},
		{"header without =", func(o *send.Options) { o.QoS, o.Sender, o.Headers = "EO", "ERP", []string{"X-Trace"} }, `--header "X-Trace" must be KEY=VALUE`},
		{"header twice", func(o *send.Options) { o.QoS, o.Sender, o.Headers = "EO", "ERP", []string{"A=1", "A=2"} }, `--header "A" is given twice`},
		{"missing file", func(o *send.Options) { o.QoS, o.Sender, o.File = "EO", "ERP", "/nonexistent/order.xml" }, "--file: /nonexistent/order.xml"},
		{"jsonl with flags", func(o *send.Options) { o.JSONL, o.Sender = true, "ERP" }, "--jsonl takes every field from its input lines"},
		{"jsonl with --key", func(o *send.Options) { o.JSONL, o.Key, o.KeyGiven = true, "k", true }, "--jsonl takes every field from its input lines"},
		{"empty --key", func(o *send.Options) { o.QoS, o.Sender, o.KeyGiven = "EO", "ERP", true }, "--key is empty; a key is 1-128 printable characters"},
		{"bad --key", func(o *send.Options) { o.QoS, o.Sender, o.Key, o.KeyGiven = "EO", "ERP", "a\nb", true },
			`key "a\nb" contains the control character U+000A at byte 1; a key is 1-128 printable characters (no tab)`},
		{"jsonl without input", func(o *send.Options) { o.JSONL = true }, "stdin held no messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setupRun(t, output.Table, "")
			tt.set(b.opts)
			err := send.Run(context.Background(), b.opts)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
			require.Zero(t, b.admin.opened, "a usage error is found before the store is opened")
		})
	}
}

func TestSendRunJSONL(t *testing.T) {
	t.Parallel()

	in := "\n" + `{"qos":"EO","sender":"ERP"}` + "\n\n" + `{"qos":"EO","sender":"SHOP"}` + "\n"
	b := setupRun(t, output.IDs, in)
	b.opts.JSONL = true
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Len(t, b.admin.reqs, 2)
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a\n0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1b\n", b.out.String(), "one id per line, in input order")

	// A request the service refuses is named by its input line.
	b = setupRun(t, output.Table, in)
	b.opts.JSONL = true
	b.admin.err = &admin.RequestError{Index: 1, Err: domain.Errorf(domain.ErrTooLarge, "payload is 11MiB")}
	err := send.Run(context.Background(), b.opts)
	require.ErrorIs(t, err, domain.ErrTooLarge)
	require.EqualError(t, err, "line 4: payload is 11MiB; nothing was stored")
	require.Empty(t, b.out.String())

	b = setupRun(t, output.Table, "\n"+`{"qos":"EO","sender":"ERP"}`)
	b.opts.JSONL = true
	b.admin.err = domain.Errorf(domain.ErrTooLarge, "payload is 11MiB")
	err = send.Run(context.Background(), b.opts)
	require.EqualError(t, err, "line 2: payload is 11MiB; nothing was stored", "a batch of one names its line too")

	// A later batch refused after an earlier one was stored: partial, exit 5.
	b = setupRun(t, output.IDs, strings.Repeat(`{"qos":"EO","sender":"ERP"}`+"\n", 1500))
	b.opts.JSONL = true
	b.admin.err, b.admin.okCalls = domain.Errorf(domain.ErrUnavailable, "the server went away"), 1
	err = send.Run(context.Background(), b.opts)
	require.ErrorIs(t, err, cmdutil.ErrPartial)
	require.NotErrorIs(t, err, domain.ErrUnavailable, "the exit code says what was stored: some of it")
	require.EqualError(t, err, "stored 1000 of 1500 messages (their ids are printed), then: the server went away")
	require.Equal(t, 1000, strings.Count(b.out.String(), "\n"), "the ids of what was stored")
}

func TestSendKeyFlag(t *testing.T) {
	t.Parallel()

	o, err := parseFlags(t, "--qos", "EO", "--sender", "ERP", "--key", "order-4711")
	require.NoError(t, err)
	require.Equal(t, "order-4711", o.Key)
	require.True(t, o.KeyGiven)

	o, err = parseFlags(t, "--qos", "EO", "--sender", "ERP", "--key", "")
	require.NoError(t, err)
	require.True(t, o.KeyGiven, "an empty --key is given, and refused when run")

	o, err = parseFlags(t, "--qos", "EO", "--sender", "ERP")
	require.NoError(t, err)
	require.False(t, o.KeyGiven)
}

func TestSendRunKey(t *testing.T) {
	t.Parallel()

	b := setupRun(t, output.Table, "x")
	b.opts.QoS, b.opts.Sender, b.opts.Key, b.opts.KeyGiven = "EO", "ERP", "order-4711", true
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Equal(t, "order-4711", b.admin.reqs[0].Key)
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a\n", b.out.String())
	require.Empty(t, b.hints, "a first send is no news")

	// A repeat prints the id all the same, and says so on stderr.
	b = setupRun(t, output.Table, "x")
	b.opts.QoS, b.opts.Sender, b.opts.Key, b.opts.KeyGiven = "EO", "ERP", "order-4711", true
	b.admin.repeat = true
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a\n", b.out.String(), "id=$(queuectl send --key ...) works on a retry")
	require.Equal(t, []string{`key "order-4711" of sender ERP was sent already: message 0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a (TBDL); nothing new was stored`}, b.hints)

	// -o json says it in duplicate, false or true.
	for _, repeat := range []bool{false, true} {
		b = setupRun(t, output.JSON, "x")
		b.opts.QoS, b.opts.Sender, b.opts.Key, b.opts.KeyGiven = "EO", "ERP", "order-4711", true
		b.admin.repeat = repeat
		require.NoError(t, send.Run(context.Background(), b.opts))
		var got map[string]any
		require.NoError(t, json.Unmarshal(b.out.Bytes(), &got))
		require.Equal(t, repeat, got["duplicate"])
		require.Equal(t, "order-4711", got["key"])
		require.Equal(t, "0193a5c4-7b1e-7c3d-9f5e-2a4b6c8d0e1a", got["id"])
	}
}

func TestSendRunJSONLKeys(t *testing.T) {
	t.Parallel()

	in := `{"qos":"EO","sender":"ERP","key":"a"}` + "\n" + `{"qos":"EO","sender":"ERP","key":"b"}` + "\n"
	b := setupRun(t, output.JSONL, in)
	b.opts.JSONL = true
	b.admin.repeat = true
	require.NoError(t, send.Run(context.Background(), b.opts))
	require.Equal(t, []string{"a", "b"}, []string{b.admin.reqs[0].Key, b.admin.reqs[1].Key})
	lines := strings.Split(strings.TrimSpace(b.out.String()), "\n")
	require.Len(t, lines, 2)
	for _, l := range lines {
		require.Contains(t, l, `"duplicate":true`)
	}
	require.Equal(t, []string{"2 of 2 lines repeated a key their sender used already: their ids are the messages sent with it first; nothing new was stored for them"}, b.hints)
}
