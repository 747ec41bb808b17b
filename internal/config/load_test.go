package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

type testBundle struct {
	dir string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{dir: t.TempDir()}
}

// rootFlags is a flag set like the root command's persistent flags.
func rootFlags() *pflag.FlagSet {
	pf := pflag.NewFlagSet("queuectl", pflag.ContinueOnError)
	pf.String("db", "", "")
	pf.String("store", "", "")
	pf.String("server", "", "")
	pf.String("context", "", "")
	pf.String("token", "", "")
	pf.String("token-file", "", "")
	pf.String("config", "", "")
	pf.StringP("output", "o", "table", "")
	pf.Bool("no-color", false, "")
	pf.BoolP("quiet", "q", false, "")
	pf.Duration("timeout", 0, "")
	return pf
}

// writeFile writes a config file into the bundle's directory.
func (b *testBundle) writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(b.dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// load parses args as global flags and loads the configuration.
func load(t *testing.T, args ...string) (*config.Config, error) {
	t.Helper()
	fs := rootFlags()
	require.NoError(t, fs.Parse(args))
	return config.Load(fs)
}

// loadFile loads the configuration from a file with the given content, so
// that no default file of the machine running the test is read.
func (b *testBundle) loadFile(t *testing.T, content string, args ...string) (*config.Config, error) {
	t.Helper()
	p := b.writeFile(t, "config.yaml", content)
	return load(t, append([]string{"--config", p}, args...)...)
}

// isolate points the default config and data locations at empty
// directories and clears the environment variables Load reads. It uses
// t.Setenv, so a test that calls it cannot run in parallel.
func isolate(t *testing.T) (configHome, dataHome string) {
	t.Helper()
	configHome, dataHome = t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", configHome)
	t.Setenv("XDG_DATA_HOME", dataHome)
	t.Setenv("NO_COLOR", "")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, config.EnvPrefix+"_") {
			t.Setenv(k, "")
		}
	}
	return configHome, dataHome
}

func TestLoadDefaults(t *testing.T) {
	configHome, dataHome := isolate(t)

	c, err := load(t)
	require.NoError(t, err)
	require.Empty(t, c.File, "no config file exists, and none is needed")
	require.Empty(t, c.Receivers)
	require.Empty(t, c.Routes)
	require.Empty(t, c.Senders)
	require.Empty(t, c.Server.Tokens)
	require.Empty(t, c.Contexts)

	// §8's defaults, and the global flags' (§5).
	want := config.Config{
		DB:      filepath.Join(dataHome, "queuectl", "queuectl.db"),
		Output:  "table",
		Timeout: 0,
		Engine: config.Engine{
			Role:         "central",
			Workers:      32,
			EOWindow:     64,
			PollInterval: time.Second,
			MaxPayload:   10 << 20,
			Retry: config.Retry{
				Count: 3, Interval: 5 * time.Minute, Backoff: "fixed", MaxInterval: time.Hour,
			},
			Blacklisting:    config.Blacklisting{Enabled: true, Crashes: 2},
			Retention:       config.Retention{Delivered: 24 * time.Hour, Failed: 720 * time.Hour, Audit: 2160 * time.Hour},
			ShutdownTimeout: 30 * time.Second,
		},
		Tx:      config.Tx{CheckAfter: 30 * time.Second, CheckInterval: 30 * time.Second, MaxChecks: 10, CheckTimeout: 10 * time.Second},
		Cluster: config.Cluster{Heartbeat: time.Second, LeaseTTL: 10 * time.Second},
	}
	got := *c
	got.Receivers, got.Routes, got.Senders, got.Server.Tokens, got.Contexts = nil, nil, nil, nil, nil
	require.Equal(t, want, got)
	require.Equal(t, filepath.Join(configHome, "queuectl", "config.yaml"), config.DefaultFile())
	require.Equal(t, want.DB, config.DefaultDBPath())
}

func TestLoadDefaultFile(t *testing.T) {
	configHome, _ := isolate(t)

	p := filepath.Join(configHome, "queuectl", "config.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte("engine: {workers: 4}\n"), 0o600))

	c, err := load(t)
	require.NoError(t, err)
	require.Equal(t, p, c.File, "the default file is read when it exists")
	require.Equal(t, 4, c.Engine.Workers)
}

func TestLoadPrecedence(t *testing.T) {
	isolate(t)
	b := setup(t)
	file := b.writeFile(t, "config.yaml", "output: yaml\ndb: /file/q.db\nengine: {workers: 4, role: sender}\n")

	// flags > env > file > defaults, key by key.
	t.Setenv("QUEUECTL_OUTPUT", "json")
	t.Setenv("QUEUECTL_DB", "/env/q.db")
	t.Setenv("QUEUECTL_ENGINE_WORKERS", "32")
	t.Setenv("QUEUECTL_ENGINE_RETRY_COUNT", "7")

	c, err := load(t, "--config", file, "-o", "wide", "--db", "/flag/q.db")
	require.NoError(t, err)
	require.Equal(t, "wide", c.Output, "a flag beats the environment")
	require.Equal(t, "/flag/q.db", c.DB)
	require.Equal(t, 32, c.Engine.Workers, "the environment beats the file")
	require.Equal(t, 7, c.Engine.Retry.Count, "the environment beats a default")
	require.Equal(t, "sender", c.Engine.Role, "the file beats a default")
	require.Equal(t, 5*time.Minute, c.Engine.Retry.Interval, "a default stays when nothing sets it")

	c, err = load(t, "--config", file)
	require.NoError(t, err)
	require.Equal(t, "json", c.Output, "without the flag, the environment")
	require.Equal(t, "/env/q.db", c.DB)

	t.Setenv("QUEUECTL_OUTPUT", "")
	t.Setenv("QUEUECTL_DB", "")
	c, err = load(t, "--config", file)
	require.NoError(t, err)
	require.Equal(t, "yaml", c.Output, "without the environment, the file")
	require.Equal(t, "/file/q.db", c.DB)

	c, err = load(t, "--config", file, "-o", "table")
	require.NoError(t, err)
	require.Equal(t, "table", c.Output, "a flag set to its default value still beats the file")
}

func TestLoadConfigFromEnv(t *testing.T) {
	isolate(t)
	b := setup(t)
	file := b.writeFile(t, "config.yaml", "quiet: true\n")

	t.Setenv("QUEUECTL_CONFIG", file)
	c, err := load(t)
	require.NoError(t, err)
	require.Equal(t, file, c.File)
	require.True(t, c.Quiet)

	t.Setenv("QUEUECTL_CONFIG", filepath.Join(b.dir, "missing.yaml"))
	_, err = load(t)
	require.ErrorIs(t, err, domain.ErrInvalid, "a file named in QUEUECTL_CONFIG must exist")
	require.ErrorContains(t, err, "missing.yaml")
}

func TestLoadServerEnv(t *testing.T) {
	isolate(t)

	t.Setenv("QUEUECTL_SERVER", "https://queuectl.example:7870")
	c, err := load(t)
	require.NoError(t, err)
	require.Equal(t, "https://queuectl.example:7870", c.ServerURL, "QUEUECTL_SERVER sets server_url, not the server: section")
	require.Empty(t, c.Server.Listen)

	c, err = load(t, "--server", "unix:///run/q.sock")
	require.NoError(t, err)
	require.Equal(t, "unix:///run/q.sock", c.ServerURL, "--server beats QUEUECTL_SERVER")

	t.Setenv("QUEUECTL_SERVER_LISTEN", "127.0.0.1:7870")
	c, err = load(t)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7870", c.Server.Listen, "keys of the server: section have their own variables")
	require.Equal(t, "https://queuectl.example:7870", c.ServerURL)
}

// TestLoadServerEnvKeepsTheServerSection: QUEUECTL_SERVER names the server
// commands talk to; the server: section of the file — its tokens above all
// — stays as the file says.
func TestLoadServerEnvKeepsTheServerSection(t *testing.T) {
	isolate(t)
	b := &testBundle{dir: t.TempDir()}
	t.Setenv("QUEUECTL_SERVER", "http://127.0.0.1:7870")
	c, err := b.loadFile(t, `server:
  listen: 127.0.0.1:7871
  tokens:
    - {name: ops, role: operator, sha256: "d9310c002af91822beb0b3487d8b04f85bf6bf1f8a5496bff7d35fc7c5a29def"}
`)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:7870", c.ServerURL)
	require.Equal(t, "127.0.0.1:7871", c.Server.Listen)
	require.Len(t, c.Server.Tokens, 1, "the tokens of the file")
}

func TestLoadNoColor(t *testing.T) {
	isolate(t)

	c, err := load(t)
	require.NoError(t, err)
	require.False(t, c.NoColor)

	c, err = load(t, "--no-color")
	require.NoError(t, err)
	require.True(t, c.NoColor)

	t.Setenv("QUEUECTL_NO_COLOR", "true")
	c, err = load(t)
	require.NoError(t, err)
	require.True(t, c.NoColor)
	t.Setenv("QUEUECTL_NO_COLOR", "")

	t.Setenv("NO_COLOR", "1")
	c, err = load(t)
	require.NoError(t, err)
	require.True(t, c.NoColor, "NO_COLOR with any value turns colour off")
}

func TestLoadServerFlag(t *testing.T) {
	t.Parallel()

	b := setup(t)
	c, err := b.loadFile(t, "server_url: http://127.0.0.1:1\nserver: {listen: '127.0.0.1:7870'}\n", "--server", "http://127.0.0.1:7870")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:7870", c.ServerURL)
	require.Equal(t, "127.0.0.1:7870", c.Server.Listen)

	c, err = b.loadFile(t, "server_url: http://127.0.0.1:1\n")
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:1", c.ServerURL)
}

func TestLoadExplicitFileMissing(t *testing.T) {
	t.Parallel()

	b := setup(t)
	missing := filepath.Join(b.dir, "nope.yaml")
	_, err := load(t, "--config", missing)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "config file "+missing)
	require.ErrorContains(t, err, "no such file")
}

func TestLoadBadFile(t *testing.T) {
	t.Parallel()

	b := setup(t)
	_, err := b.loadFile(t, "engine: [workers\n")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "is not valid YAML")

	_, err = load(t, "--config", b.dir)
	require.ErrorIs(t, err, domain.ErrInvalid, "a directory is no config file")
}

func TestLoadUnknownKeys(t *testing.T) {
	t.Parallel()

	tests := map[string]struct{ content, want string }{
		"top level":      {"outptu: json\n", "outptu is not a setting (did you mean output?)"},
		"engine":         {"engine: {wrokers: 4}\n", "engine.wrokers is not a setting (did you mean engine.workers?)"},
		"retry":          {"engine: {retry: {cuont: 4}}\n", "engine.retry.cuont is not a setting (did you mean engine.retry.count?)"},
		"receiver field": {"receivers: {WMS: {type: http, url: 'http://x'}}\n", "receivers.wms.url is not a setting (did you mean receivers.wms.urls?)"},
		"route field":    {"routes: [{sender: ERP, receiver: WMS}]\n", "routes[0].receiver is not a setting (did you mean routes[0].receivers?)"},
		"context field":  {"contexts: {prod: {url: 'https://x'}}\n", "contexts.prod.url is not a setting"},
		"token field":    {"server: {tokens: [{name: ops, role: operator, sha: abc}]}\n", "server.tokens[0].sha is not a setting"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			b := setup(t)
			_, err := b.loadFile(t, tt.content)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestLoadUnknownKeyNamed(t *testing.T) {
	t.Parallel()

	b := setup(t)
	_, err := b.loadFile(t, "engine: {wrokers: 4}\n")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "wrokers")
}

func TestLoadInvalidValues(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, content string
		args          []string
		want          string
	}{
		{"role", "engine: {role: boss}\n", nil, `engine.role "boss"`},
		{"backoff", "engine: {retry: {backoff: linear}}\n", nil, `engine.retry.backoff "linear"`},
		{"workers 0", "engine: {workers: 0}\n", nil, "engine.workers 0 must be at least 1"},
		{"workers negative", "engine: {workers: -2}\n", nil, "engine.workers -2"},
		{"retry count", "engine: {retry: {count: -1}}\n", nil, "engine.retry.count -1"},
		{"retry interval", "engine: {retry: {interval: -5m}}\n", nil, "engine.retry.interval"},
		{"crashes 0", "engine: {blacklisting: {crashes: 0}}\n", nil, "engine.blacklisting.crashes 0 must be at least 1"},
		{"max payload", "engine: {max_payload: 10XB}\n", nil, `size "10XB"`},
		{"duration", "engine: {shutdown_timeout: soon}\n", nil, "shutdown_timeout"},
		{"timeout", "", []string{"--timeout", "-1s"}, "timeout must not be negative"},
		{"receiver type", "receivers: {WMS: {type: ftp}}\n", nil, `receivers.WMS: type "ftp" must be http, exec, file or discard`},
		{"receiver no type", "receivers: {WMS: {urls: ['http://x']}}\n", nil, `receivers.WMS: type ""`},
		{"http without urls", "receivers: {WMS: {type: http}}\n", nil, "receivers.WMS: type http needs urls"},
		{"exec without command", "receivers: {ARCHIVE: {type: exec}}\n", nil, "receivers.ARCHIVE: type exec needs command"},
		{"file without dir", "receivers: {DROPBOX: {type: file}}\n", nil, "receivers.DROPBOX: type file needs dir"},
		{"receiver name", "receivers: {'W M S': {type: discard}}\n", nil, `receiver "W M S"`},
		{"env name", "receivers: {A: {type: exec, command: [x], env: {'A-B': x}}}\n", nil, `receivers.A.env: "A-B" is not an environment variable name`},
		{"env QUEUECTL_", "receivers: {A: {type: exec, command: [x], env: {QUEUECTL_SEQ: '1'}}}\n", nil, `receivers.A.env: QUEUECTL_SEQ: the QUEUECTL_ variables are the message's metadata`},
		{"inherit_env QUEUECTL_", "receivers: {A: {type: exec, command: [x], inherit_env: [queuectl_token]}}\n", nil, `receivers.A.inherit_env: queuectl_token`},
		{"inherit_env name", "receivers: {A: {type: exec, command: [x], inherit_env: ['1X']}}\n", nil, `receivers.A.inherit_env: "1X"`},
		{"env on http", "receivers: {A: {type: http, urls: ['http://127.0.0.1:9000/in'], env: {X: y}}}\n", nil, `receivers.A: env and inherit_env are for exec receivers, not http`},
		{"audit retention", "engine: {retention: {audit: -1h}}\n", nil, "engine.retention.audit -1h0m0s must not be negative"},
		{"undefined context flag", "contexts: {prod: {server: 'https://x'}}\n", []string{"--context", "staging"}, `context "staging" is not defined`},
		{"undefined context, none defined", "", []string{"--context", "prod"}, `context "prod" is not defined`},
		{"undefined current_context", "current_context: staging\ncontexts: {prod: {server: 'https://x'}}\n", nil, `current_context "staging" is not defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t)
			_, err := b.loadFile(t, tt.content, tt.args...)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestLoadValidReceiversAndContexts(t *testing.T) {
	t.Parallel()

	b := setup(t)
	c, err := b.loadFile(t, `
engine:
  role: receiver
  max_payload: 512KiB
  retry: {count: 5, interval: 30s, backoff: exponential, max_interval: 10m}
receivers:
  WMS:     {type: http, urls: ["http://127.0.0.1:9000/in", "http://127.0.0.1:9001/in"], timeout: 30s, headers: {X-Env: prod}}
  ARCHIVE: {type: exec, command: ["/usr/local/bin/archive", "--stdin"], timeout: 10s,
            env: {Archive_Mode: full, TMPDIR: /var/tmp}, inherit_env: [AWS_PROFILE, http_proxy]}
  DROPBOX: {type: file, dir: /var/spool/queuectl/out}
  NULL:    {type: discard}
routes:
  - {sender: ERP, interface: OrderCreate, receivers: [WMS, ARCHIVE]}
senders:
  ERP: {check_url: "http://127.0.0.1:9100/tx-check"}
server:
  tokens:
    - {name: ops, role: operator, sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
contexts:
  prod: {server: "https://queuectl.example:7870", token_file: "~/.config/queuectl/prod.token"}
current_context: prod
`, "--context", "prod")
	require.NoError(t, err)
	require.Equal(t, "receiver", c.Engine.Role)
	require.Equal(t, config.Size(512<<10), c.Engine.MaxPayload)
	require.Equal(t, config.Retry{Count: 5, Interval: 30 * time.Second, Backoff: "exponential", MaxInterval: 10 * time.Minute}, c.Engine.Retry)
	require.Equal(t, config.Receiver{
		Type: "http", URLs: []string{"http://127.0.0.1:9000/in", "http://127.0.0.1:9001/in"},
		Timeout: 30 * time.Second, Headers: map[string]string{"X-Env": "prod"},
	}, c.Receivers["WMS"], "header keys keep their case")
	require.Equal(t, []string{"/usr/local/bin/archive", "--stdin"}, c.Receivers["ARCHIVE"].Command)
	require.Equal(t, map[string]string{"Archive_Mode": "full", "TMPDIR": "/var/tmp"}, c.Receivers["ARCHIVE"].Env, "environment names keep their case")
	require.Equal(t, []string{"AWS_PROFILE", "http_proxy"}, c.Receivers["ARCHIVE"].InheritEnv)
	require.Equal(t, "/var/spool/queuectl/out", c.Receivers["DROPBOX"].Dir)
	require.Equal(t, "discard", c.Receivers["NULL"].Type)
	require.Equal(t, []config.Route{{Sender: "ERP", Interface: "OrderCreate", Receivers: []string{"WMS", "ARCHIVE"}}}, c.Routes)
	require.Equal(t, "http://127.0.0.1:9100/tx-check", c.Senders["ERP"].CheckURL)
	require.Equal(t, []config.Token{{Name: "ops", Role: "operator", SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}, c.Server.Tokens)
	require.Equal(t, "https://queuectl.example:7870", c.Contexts["prod"].Server)
	require.Equal(t, "prod", c.CurrentContext)
	require.Equal(t, "prod", c.Context)
}

func TestLoadKeepsNameCase(t *testing.T) {
	t.Parallel()

	b := setup(t)
	c, err := b.loadFile(t, `
receivers:
  WMS:     {type: http, urls: ["http://127.0.0.1:9000/in"], headers: {X-Env: prod, Authorization: Bearer x}}
  Archive: {type: discard}
  NULL:    {type: discard}
senders:
  ERP: {check_url: "http://127.0.0.1:9100/tx-check"}
contexts:
  Prod: {server: "https://queuectl.example:7870"}
`, "--context", "Prod")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"WMS", "Archive", "NULL"}, mapKeys(c.Receivers),
		"receiver names match messages case-sensitively; NULL (§8) is a name, not YAML's null")
	require.Equal(t, map[string]string{"X-Env": "prod", "Authorization": "Bearer x"}, c.Receivers["WMS"].Headers)
	require.Equal(t, []string{"ERP"}, mapKeys(c.Senders))
	require.Equal(t, []string{"Prod"}, mapKeys(c.Contexts))
	require.Equal(t, "https://queuectl.example:7870", c.Contexts["Prod"].Server)

	_, err = b.loadFile(t, "receivers: {WMS: {type: discard}, wms: {type: discard}}\n")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `"WMS" and "wms" differ only in case`)

	_, err = b.loadFile(t, "receivers: {~: {type: discard}}\n")
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `receiver "~"`)
}

func TestLoadEnvOverridesNamedSection(t *testing.T) {
	isolate(t)
	b := setup(t)
	file := b.writeFile(t, "config.yaml", "receivers: {WMS: {type: http, urls: ['http://x'], timeout: 30s}}\n")

	t.Setenv("QUEUECTL_RECEIVERS_WMS_TIMEOUT", "5s")
	c, err := load(t, "--config", file)
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, c.Receivers["WMS"].Timeout, "the environment still overrides a named receiver's keys")
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLoadChecksRoutesAndRanges: what config check reports, every command
// refuses (exit 2), naming the key; the error reads as the first problem
// and its hint counts the others.
func TestLoadChecksRoutesAndRanges(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, content, want string
	}{
		{"route to a null receiver", "receivers: {DROPBOX: {type: file, dir: /x}}\nroutes: [{sender: ERP, receivers: [DROPBOX, NULL]}]\n",
			"routes[0].receivers[1] is empty"},
		{"route to a typo", "receivers: {WMS: {type: discard}}\nroutes: [{sender: ERP, receivers: [WMX]}]\n",
			"routes[0].receivers[0]: WMX is not a configured receiver (did you mean WMS?)"},
		{"route to nothing configured", "routes: [{sender: ERP, receivers: [WMS]}]\n", "routes[0].receivers[0]: WMS is not a configured receiver"},
		{"route without receivers", "routes: [{sender: ERP}]\n", "routes[0].receivers is empty"},
		{"route without sender", "receivers: {WMS: {type: discard}}\nroutes: [{receivers: [WMS]}]\n", "routes[0].sender: sender is required"},
		{"max_interval below interval", "engine: {retry: {interval: 10m, max_interval: 1m}}\n",
			"engine.retry.max_interval 1m0s must be at least engine.retry.interval (10m0s)"},
		{"zero interval", "engine: {retry: {interval: 0s}}\n", "engine.retry.interval 0s must be more than 0"},
		{"zero payload", "engine: {max_payload: 0}\n", "engine.max_payload 0 must be at least 1 byte"},
		{"lease below heartbeat", "cluster: {heartbeat: 10s, lease_ttl: 5s}\n", "cluster.lease_ttl 5s must be longer than cluster.heartbeat (10s)"},
		{"max checks", "tx: {max_checks: 0}\n", "tx.max_checks 0 must be at least 1"},
		{"zero check timeout", "tx: {check_timeout: 0s}\n", "tx.check_timeout 0s must be more than 0"},
		{"http url", "receivers: {WMS: {type: http, urls: ['127.0.0.1:9000/in']}}\n", `receivers.WMS.urls[0] "127.0.0.1:9000/in" is not an http:// or https:// URL`},
		{"check url", "senders: {ERP: {check_url: 'ftp://x/y'}}\n", `senders.ERP.check_url "ftp://x/y" is not an http:// or https:// URL`},
		{"receiver timeout", "receivers: {WMS: {type: discard, timeout: -1s}}\n", "receivers.WMS.timeout -1s must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := setup(t).loadFile(t, tt.content)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}

	_, err := setup(t).loadFile(t, "engine: {workers: 0, blacklisting: {crashes: 0}}\nroutes: [{sender: ERP, receivers: [WMS]}]\n")
	var ps config.Problems
	require.ErrorAs(t, err, &ps)
	require.Len(t, ps, 3)
	require.EqualError(t, err, "engine.workers 0 must be at least 1")
	require.Equal(t, "2 more problem(s): 'queuectl config check' lists every one", domain.HintOf(err))
}
