package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

// sha256 of "test" and of "other".
const (
	hashTest  = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	hashOther = "d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa"
)

func TestLoadTokens(t *testing.T) {
	t.Parallel()

	b := setup(t)
	c, err := b.loadFile(t, `
server:
  tokens:
    - {name: ops, role: operator, sha256: "`+hashTest+`"}
    - {name: grafana, role: monitor, sha256: "`+hashOther+`"}
`)
	require.NoError(t, err)
	require.Equal(t, []config.Token{
		{Name: "ops", Role: "operator", SHA256: hashTest},
		{Name: "grafana", Role: "monitor", SHA256: hashOther},
	}, c.Server.Tokens)
}

func TestLoadInvalidTokens(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, tokens, want string
	}{
		{"role", `{name: ops, role: root, sha256: "` + hashTest + `"}`,
			`server.tokens[0] (ops): role "root" must be one of monitor, operator, admin, producer`},
		{"no role", `{name: ops, sha256: "` + hashTest + `"}`,
			`server.tokens[0] (ops): role "" must be one of`},
		{"short hash", `{name: ops, role: operator, sha256: "9f86d08"}`,
			"server.tokens[0] (ops): sha256 must be the 64 hex digits of the token's SHA-256"},
		{"not hex", `{name: ops, role: operator, sha256: "` + hashTest[:63] + `g"}`,
			"server.tokens[0] (ops): sha256 must be the 64 hex digits"},
		{"the token itself", `{name: ops, role: operator, sha256: "s3cr3t"}`,
			"server.tokens[0] (ops): sha256 must be"},
		{"no name", `{role: operator, sha256: "` + hashTest + `"}`,
			"server.tokens[0]: token name is required"},
		{"bad name", `{name: "ops team", role: operator, sha256: "` + hashTest + `"}`,
			`server.tokens[0] (ops team): token name "ops team" contains ' '`},
		{"reserved name", `{name: engine, role: admin, sha256: "` + hashTest + `"}`,
			`server.tokens[0] (engine): token name "engine" is reserved`},
		{"second entry", `{name: ops, role: operator, sha256: "` + hashTest + `"}, {name: ci, role: deployer, sha256: "` + hashOther + `"}`,
			`server.tokens[1] (ci): role "deployer"`},
		{"same name", `{name: ops, role: operator, sha256: "` + hashTest + `"}, {name: ops, role: monitor, sha256: "` + hashOther + `"}`,
			"server.tokens[1] (ops): the name is also server.tokens[0]'s"},
		{"same hash", `{name: ops, role: operator, sha256: "` + hashTest + `"}, {name: ci, role: admin, sha256: "` + hashTest + `"}`,
			"server.tokens[1] (ci): the sha256 is also server.tokens[0]'s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			b := setup(t)
			_, err := b.loadFile(t, "server: {tokens: ["+tt.tokens+"]}\n")
			require.ErrorIs(t, err, domain.ErrInvalid)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestValidateTokenName(t *testing.T) {
	t.Parallel()

	for _, ok := range []string{"ops", "grafana-prod", "ci_deploy.2", "Engineer"} {
		require.NoError(t, config.ValidateTokenName(ok), ok)
	}
	for _, bad := range []string{"", "socket", "Server", "anonymous", "a b", "ops:admin", string(make([]byte, 61))} {
		require.ErrorIs(t, config.ValidateTokenName(bad), domain.ErrInvalid, "%q", bad)
	}
}
