package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
)

type testBundle struct {
	config string // an empty config file, so no file of the machine is read
	db     string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	dir := t.TempDir()
	b := &testBundle{config: filepath.Join(dir, "config.yaml"), db: filepath.Join(dir, "data", "queuectl.db")}
	require.NoError(t, os.WriteFile(b.config, nil, 0o600))
	require.NoError(t, os.Mkdir(filepath.Dir(b.db), 0o700), "a store named by --db is made only in a directory that exists")
	return b
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs one queuectl command line in process, against the bundle's store,
// with stdin as its input.
func (b *testBundle) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	code := cli.Run(context.Background(), f, append([]string{"--config", b.config, "--db", b.db}, args...))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

func TestRunSendThenShow(t *testing.T) {
	t.Parallel()

	b := setup(t)
	r := b.run(t, "<order id=\"4711\"/>\n", "send", "--qos", "EO", "--sender", "ERP", "--receiver", "WMS",
		"--interface", "OrderCreate", "--header", "X-Trace=abc")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "queuectl: created a new store at "+b.db+"\n", r.stderr, "the first send makes the store, and says so")
	id := strings.TrimSuffix(r.stdout, "\n")
	require.NoError(t, domain.ValidID(id), "send prints the new id and nothing else: %q", r.stdout)

	r = b.run(t, "", "message", "show", id, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), r.stdout)
	require.Equal(t, id, m["id"])
	require.Equal(t, "EO", m["qos"])
	require.Equal(t, "ERP", m["sender"])
	require.Equal(t, []any{"WMS"}, m["receivers"])
	require.Equal(t, "OrderCreate", m["interface"])
	require.Equal(t, "XBTI0000", m["queue"])
	require.Equal(t, "inbound", m["stage"])
	require.Equal(t, "TBDL", m["status"])
	require.Equal(t, float64(1), m["seq"])
	require.Equal(t, float64(len("<order id=\"4711\"/>\n")), m["size"])
	require.Equal(t, map[string]any{"X-Trace": "abc"}, m["headers"])
	require.NotContains(t, m, "payload", "the JSON of a message has no payload (§5)")
	history, ok := m["history"].([]any)
	require.True(t, ok, "message show includes the history")
	require.Len(t, history, 1)
	require.Equal(t, "TBDL", history[0].(map[string]any)["to"])
	created, ok := m["created_at"].(string)
	require.True(t, ok)
	require.True(t, strings.HasSuffix(created, "Z"), "times are RFC 3339 UTC: %s", created)

	r = b.run(t, "", "message", "payload", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "<order id=\"4711\"/>\n", r.stdout, "byte for byte")

	r = b.run(t, "", "message", "show", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ID:")
	require.Contains(t, r.stdout, id)
	require.Contains(t, r.stdout, `<order id="4711"/>`, "the table form previews the payload")

	r = b.run(t, "", "queue", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^XBTI0000 +EO +inbound +ACTIVE +1 `, r.stdout)

	r = b.run(t, "", "message", "list", "-o", "ids")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, id+"\n", r.stdout)
}

func TestRunErrors(t *testing.T) {
	t.Parallel()

	b := setup(t)
	r := b.run(t, "", "tune", "set", "EO_OUTBOUND_PARALLEL", "1") // makes the store
	require.Equal(t, 0, r.code, r.stderr)
	unknown := domain.NewID()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown message", []string{"message", "show", unknown}, 3, "queuectl: message " + unknown},
		{"malformed id", []string{"message", "payload", "42"}, 2, `queuectl: message id "42" is not a UUID`},
		{"unknown queue", []string{"queue", "show", "XBTI0042"}, 3, "queuectl: queue XBTI0042"},
		{"unknown flag", []string{"queue", "list", "--bogus"}, 2, "queuectl: unknown flag: --bogus\nhint: see 'queuectl queue list --help'\n"},
		{"bad flag value", []string{"message", "list", "--limit", "many"}, 2, `queuectl: invalid argument "many" for "--limit" flag`},
		{"bad filter", []string{"message", "list", "--status", "DONE"}, 2, `queuectl: status "DONE"`},
		{"bad output format", []string{"queue", "list", "-o", "xml"}, 2, `queuectl: output format "xml"`},
		{"unknown command", []string{"bogus"}, 2, `queuectl: unknown command "bogus" for "queuectl"`},
		{"missing argument", []string{"message", "show"}, 2, "queuectl: queuectl message show takes ID, got 0 argument(s)\nhint: see 'queuectl message show --help'\n"},
		{"send without qos", []string{"send", "--sender", "ERP"}, 2, "queuectl: --qos is required"},
		{"unsupported store", []string{"--store", "mysql://q:s3cret@db/q", "queue", "list"}, 2, "REDACTED"},
		{"postgres store down", []string{"--store", "postgres://q:s3cret@127.0.0.1:1/q", "queue", "list"}, 6, "postgres://q:REDACTED@127.0.0.1:1/q"},
		{"no store", []string{"--db", filepath.Join(filepath.Dir(b.db), "typo.db"), "queue", "list"}, 6, "queuectl: there is no store at "},
	}
	for _, tt := range tests {
		r := b.run(t, "", tt.args...)
		require.Equal(t, tt.code, r.code, "%s: %s", tt.name, r.stderr)
		require.Contains(t, r.stderr, tt.stderr, tt.name)
		require.True(t, strings.HasPrefix(r.stderr, "queuectl: "), "%s: errors start with queuectl: %q", tt.name, r.stderr)
		require.NotContains(t, r.stderr, "s3cret", tt.name)
		require.Empty(t, r.stdout, "%s: nothing on stdout", tt.name)
	}
}

func TestRunSendJSONLStoresNothingOnABadLine(t *testing.T) {
	t.Parallel()

	b := setup(t)
	in := `{"qos":"EO","sender":"ERP","receiver":"WMS","payload":"1"}` + "\n\n" +
		`{"qos":"EOIO","sender":"ERP","receiver":"WMS","app_queue":"ORDERS_DE","payload":"2"}` + "\n" +
		`{"qos":"EOIO","sender":"ERP","receiver":"WMS","app_queue":"orders_de","payload":"3"}` + "\n"
	r := b.run(t, in, "send", "--jsonl")
	require.Equal(t, 2, r.code)
	require.True(t, strings.HasPrefix(r.stderr, "queuectl: line 4: "), r.stderr)
	require.Contains(t, r.stderr, "nothing was stored")
	require.Empty(t, r.stdout)

	// Nothing at all: not even the store the first message would create.
	r = b.run(t, "", "message", "list", "-o", "json")
	require.Equal(t, 6, r.code, r.stderr)
	require.Contains(t, r.stderr, "there is no store at ")

	r = b.run(t, strings.Replace(in, "orders_de", "ORDERS_AT", 1), "send", "--jsonl")
	require.Equal(t, 0, r.code, r.stderr)
	ids := strings.Fields(r.stdout)
	require.Len(t, ids, 3, "one id per line, in input order")

	r = b.run(t, "", "message", "list", "-o", "ids")
	require.Equal(t, strings.Join(ids, "\n")+"\n", r.stdout)
}

func TestRunQuietAndEmpty(t *testing.T) {
	t.Parallel()

	b := setup(t)
	r := b.run(t, "", "tune", "set", "EO_OUTBOUND_PARALLEL", "1") // makes the store
	require.Equal(t, 0, r.code, r.stderr)
	r = b.run(t, "", "queue", "list")
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, "queuectl: no queues match\n", r.stderr, "an empty table says so on stderr")

	r = b.run(t, "", "-q", "queue", "list")
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stderr, "--quiet drops the hint")

	r = b.run(t, "", "queue", "list", "-o", "json")
	require.Equal(t, "[]\n", r.stdout)
	require.Empty(t, r.stderr)
}

func TestRunVersion(t *testing.T) {
	t.Parallel()

	b := setup(t)
	r := b.run(t, "", "version")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "queuectl "), r.stdout)

	r = b.run(t, "", "completion", "bash")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "queuectl")
}
