package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/config"
)

func TestRedacted(t *testing.T) {
	t.Parallel()

	c := &config.Config{
		Token:     "s3cr3t-token",
		TokenFile: "/home/op/.config/queuectl/prod.token",
		Store:     "postgres://queuectl:pa55word@db.example:5432/queuectl?sslmode=require",
		Server:    config.Server{Tokens: []config.Token{{Name: "ops", Role: "operator", SHA256: "9f86d08"}}},
	}
	r := c.Redacted()
	require.Equal(t, "REDACTED", r.Token)
	require.Equal(t, "postgres://queuectl:REDACTED@db.example:5432/queuectl?sslmode=require", r.Store)
	require.Equal(t, c.TokenFile, r.TokenFile, "a path is no secret")
	require.Equal(t, "9f86d08", r.Server.Tokens[0].SHA256, "hashes are no secret")

	require.Equal(t, "s3cr3t-token", c.Token, "the original keeps its values")
	require.Contains(t, c.Store, "pa55word")

	for _, store := range []string{"", "bolt:///var/lib/queuectl/q.db", "postgres://queuectl@db.example/queuectl", "postgres://db.example/queuectl"} {
		c := &config.Config{Store: store}
		require.Equal(t, store, c.Redacted().Store, "no password, nothing to hide")
		require.Empty(t, c.Redacted().Token)
	}
}

func TestRedactedReceivers(t *testing.T) {
	t.Parallel()

	c := &config.Config{
		Store: "postgres://db.example/queuectl?password=pa55word&sslmode=require",
		Receivers: map[string]config.Receiver{
			"WMS": {Type: "http", URLs: []string{"https://wms:pa55@wms.example/in", "https://wms2.example/in"}, Headers: map[string]string{
				"Authorization": "Bearer abc", "X-Api-Key": "k", "X-Auth-Token": "t", "X-Env": "prod",
			}},
			"NULL": {Type: "discard"},
			"ARCHIVE": {Type: "exec", Command: []string{"archive"}, Env: map[string]string{
				"API_KEY": "k", "PGPASSWORD": "p", "S3_SECRET": "s", "GH_TOKEN": "t", "MODE": "full",
			}},
		},
	}
	r := c.Redacted()
	require.Equal(t, map[string]string{
		"API_KEY": "REDACTED", "PGPASSWORD": "REDACTED", "S3_SECRET": "REDACTED", "GH_TOKEN": "REDACTED", "MODE": "full",
	}, r.Receivers["ARCHIVE"].Env)
	require.Equal(t, "p", c.Receivers["ARCHIVE"].Env["PGPASSWORD"], "the original keeps its values")
	require.Equal(t, "postgres://db.example/queuectl?password=REDACTED&sslmode=require", r.Store)
	require.Equal(t, []string{"https://wms:REDACTED@wms.example/in", "https://wms2.example/in"}, r.Receivers["WMS"].URLs)
	require.Equal(t, map[string]string{
		"Authorization": "REDACTED", "X-Api-Key": "REDACTED", "X-Auth-Token": "REDACTED", "X-Env": "prod",
	}, r.Receivers["WMS"].Headers)
	require.Equal(t, config.Receiver{Type: "discard"}, r.Receivers["NULL"])

	require.Equal(t, "Bearer abc", c.Receivers["WMS"].Headers["Authorization"], "the original keeps its values")
	require.Equal(t, "https://wms:pa55@wms.example/in", c.Receivers["WMS"].URLs[0])
}

// TestConfigYAMLRoundTrip checks that what config view prints (the Config
// as YAML) can serve as a config file that yields the same configuration.
func TestConfigYAMLRoundTrip(t *testing.T) {
	t.Parallel()

	b := setup(t)
	c1, err := b.loadFile(t, `
db: /var/lib/queuectl/q.db
output: wide
timeout: 45s
engine:
  role: sender
  node_id: node-1
  workers: 8
  max_payload: 1000000
  retry: {count: 5, interval: 90s, backoff: exponential, max_interval: 2h}
  blacklisting: {enabled: false, crashes: 3}
  retention: {delivered: 48h, failed: 1000h}
receivers:
  WMS:     {type: http, urls: ["http://127.0.0.1:9000/in"], timeout: 30s, headers: {X-Env: prod}}
  ARCHIVE: {type: exec, command: ["/usr/local/bin/archive", "--stdin"], timeout: 10s}
  DROPBOX: {type: file, dir: /var/spool/queuectl/out}
  SINK:    {type: discard}
routes:
  - {sender: ERP, interface: OrderCreate, receivers: [WMS, ARCHIVE]}
  - {sender: CRM, receivers: [SINK]}
senders:
  ERP: {check_url: "http://127.0.0.1:9100/tx-check"}
tx: {check_after: 1m, check_interval: 15s, max_checks: 4}
server:
  listen: 127.0.0.1:7870
  tokens:
    - {name: ops, role: operator, sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
cluster: {heartbeat: 2s, lease_ttl: 20s}
contexts:
  prod: {server: "https://queuectl.example:7870", token_file: "~/.config/queuectl/prod.token"}
current_context: prod
`)
	require.NoError(t, err)

	out, err := yaml.Marshal(c1)
	require.NoError(t, err)
	require.Contains(t, string(out), "max_payload: \"1000000\"\n", "a size that is no whole KiB is written in bytes")

	p := filepath.Join(b.dir, "view.yaml")
	require.NoError(t, os.WriteFile(p, out, 0o600))
	c2, err := load(t, "--config", p)
	require.NoError(t, err, string(out))

	c1.File, c2.File = "", ""
	require.Equal(t, c1, c2, "config view's output reads back as the same configuration:\n%s", out)
}

func TestRedactURLThatDoesNotParse(t *testing.T) {
	t.Parallel()

	for in, want := range map[string]string{
		"postgres://queuectl:s3cret@db.example:port/queuectl":  "postgres://queuectl:REDACTED@db.example:port/queuectl",
		"postgres://queuectl:s3%cret@db.example/queuectl":      "postgres://queuectl:REDACTED@db.example/queuectl",
		"postgres://queuectl:pa/ss@w@rd@db.example:x/queuectl": "postgres://queuectl:REDACTED@db.example:x/queuectl",
		"postgres://db.example:x/q?password=s3cret&sslmode=x":  "postgres://db.example:x/q?password=REDACTED&sslmode=x",
		"postgres://queuectl@db.example:x/q":                   "postgres://queuectl@db.example:x/q",
	} {
		require.Equal(t, want, config.RedactURL(in), in)
	}
}
