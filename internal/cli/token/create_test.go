package token_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/cli/token"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/httpapi"
	"github.com/queuectl/queuectl/internal/output"
)

type testBundle struct {
	out, errOut *bytes.Buffer
	cfg         *config.Config
	format      output.Format
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, cfg: &config.Config{}, format: output.Table}
}

// create runs `token create` with a fixed random source: 32 bytes of 0x01.
func (b *testBundle) create(t *testing.T, name, role string) error {
	t.Helper()
	return token.RunCreate(context.Background(), &token.CreateOptions{
		IO:     &cmdutil.IOStreams{In: strings.NewReader(""), Out: b.out, ErrOut: b.errOut},
		Format: func() (output.Format, error) { return b.format, nil },
		Config: func() (*config.Config, error) { return b.cfg, nil },
		Rand:   bytes.NewReader(bytes.Repeat([]byte{1}, 32)),
		Now:    func() time.Time { return time.Date(2026, 3, 10, 12, 0, 0, 123, time.UTC) },
		Name:   name, Role: role,
	})
}

// wantToken is what the fixed random source makes.
var wantToken = base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestCreateFlags(t *testing.T) {
	t.Parallel()

	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	var got *token.CreateOptions
	cmd := token.NewCreateCmd(f, func(_ context.Context, o *token.CreateOptions) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{"ops", "--role", "operator"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	require.NoError(t, cmd.Execute())
	require.Equal(t, "ops", got.Name)
	require.Equal(t, "operator", got.Role)
	require.NotNil(t, got.Rand)

	cmd.SetArgs([]string{"--role", "operator"})
	err := cmd.Execute()
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, "takes NAME, got 0 argument(s)")
}

func TestCreatePrintsTheTokenAndTheLineThatGrantsIt(t *testing.T) {
	t.Parallel()

	b := setup(t)
	require.NoError(t, b.create(t, "ops", "operator"))
	require.Equal(t, wantToken+"\n", b.out.String(), "stdout is the token alone, for a token file")
	line := `- {name: ops, role: operator, sha256: "` + sum(wantToken) + `", created: "2026-03-10T12:00:00Z"}`
	require.Equal(t, "queuectl: add this line under server.tokens in the server's config file and restart serve; the token is shown only now:\n"+
		line+"\n", b.errOut.String())

	// The line, under server.tokens, is a configuration the server accepts,
	// and its hash is the one the server checks the token against.
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte("server:\n  tokens:\n    "+line+"\n"), 0o600))
	c, err := config.LoadFile(p)
	require.NoError(t, err)
	require.Equal(t, []config.Token{{Name: "ops", Role: "operator", SHA256: httpapi.HashToken(wantToken), Created: "2026-03-10T12:00:00Z"}},
		c.Server.Tokens)
}

func TestCreateQuietPrintsTheLineAlone(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.cfg.Quiet = true
	require.NoError(t, b.create(t, "grafana", "monitor"))
	require.Equal(t, wantToken+"\n", b.out.String())
	require.Equal(t, `- {name: grafana, role: monitor, sha256: "`+sum(wantToken)+`", created: "2026-03-10T12:00:00Z"}`+"\n", b.errOut.String())
}

func TestCreateJSON(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.format = output.JSON
	require.NoError(t, b.create(t, "ci", "producer"))
	var got map[string]string
	require.NoError(t, json.Unmarshal(b.out.Bytes(), &got))
	require.Equal(t, map[string]string{
		"name": "ci", "role": "producer", "token": wantToken, "sha256": sum(wantToken), "created": "2026-03-10T12:00:00Z",
		"config_line": `- {name: ci, role: producer, sha256: "` + sum(wantToken) + `", created: "2026-03-10T12:00:00Z"}`,
	}, got)
	require.Empty(t, b.errOut.String(), "everything is in the JSON")
}

func TestCreateWarnsOfANameInUse(t *testing.T) {
	t.Parallel()

	b := setup(t)
	b.cfg.File = "/etc/queuectl/config.yaml"
	b.cfg.Server.Tokens = []config.Token{{Name: "ops", Role: "monitor", SHA256: sum("old")}}
	require.NoError(t, b.create(t, "ops", "operator"))
	require.Contains(t, b.errOut.String(),
		"queuectl: server.tokens in /etc/queuectl/config.yaml already has a token named ops: replace its line with the new one\n")
}

func TestCreateRefusesBadInput(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, tokenName, role, want string
		format                      output.Format
	}{
		{"no role", "ops", "", "--role is required: one of monitor, operator, admin, producer", output.Table},
		{"unknown role", "ops", "root", `role "root" must be one of monitor, operator, admin, producer`, output.Table},
		{"role case", "ops", "Operator", `role "Operator" must be one of`, output.Table},
		{"name with a space", "ops team", "operator", `token name "ops team" contains ' '`, output.Table},
		{"empty name", "", "operator", "token name is required", output.Table},
		{"reserved name", "socket", "admin", `token name "socket" is reserved`, output.Table},
		{"ids", "ops", "operator", "token create has no ids to print", output.IDs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t)
			b.format = tt.format
			err := b.create(t, tt.tokenName, tt.role)
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
			require.Empty(t, b.out.String(), "no token for a refused request")
		})
	}
}

// Two tokens are never the same: the real random source is used.
func TestCreateDrawsFreshTokens(t *testing.T) {
	t.Parallel()

	f := cmdutil.New(&cmdutil.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	seen := map[string]bool{}
	for range 3 {
		var out bytes.Buffer
		cmd := token.NewCreateCmd(f, func(ctx context.Context, o *token.CreateOptions) error {
			o.IO = &cmdutil.IOStreams{Out: &out, ErrOut: io.Discard}
			o.Format = func() (output.Format, error) { return output.Table, nil }
			o.Config = func() (*config.Config, error) { return &config.Config{}, nil }
			return token.RunCreate(ctx, o)
		})
		cmd.SetArgs([]string{"ops", "--role", "admin"})
		require.NoError(t, cmd.Execute())
		tok := strings.TrimSpace(out.String())
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		require.NoError(t, err)
		require.Len(t, raw, 32)
		require.False(t, seen[tok])
		seen[tok] = true
	}
}

// The roles the config accepts are the roles the server knows.
func TestRolesAgreeWithTheServer(t *testing.T) {
	t.Parallel()
	require.Equal(t, httpapi.RoleNames, config.TokenRoles)
}
