package cmdutil_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestResolveStore(t *testing.T) {
	t.Parallel()

	const pg = "postgres://queuectl:s3cret@db.example:5432/queuectl?sslmode=require"
	contexts := map[string]config.Context{
		"prod": {Server: "https://queuectl.example:7870"},
		"pg":   {Store: "postgresql://db.example/other"},
	}
	for _, tt := range []struct {
		name string
		c    config.Config
		want cmdutil.StoreLocation
	}{
		{"db", config.Config{DB: "/var/lib/q.db"}, cmdutil.StoreLocation{Path: "/var/lib/q.db"}},
		{"bolt URL", config.Config{DB: "/var/lib/q.db", Store: "bolt:///srv/q.db"}, cmdutil.StoreLocation{Path: "/srv/q.db"}},
		{"postgres URL", config.Config{DB: "/var/lib/q.db", Store: pg}, cmdutil.StoreLocation{Postgres: pg}},
		{"context with a store", config.Config{DB: "/var/lib/q.db", Context: "pg", Contexts: contexts},
			cmdutil.StoreLocation{Postgres: "postgresql://db.example/other"}},
		{"current context with a store", config.Config{DB: "/var/lib/q.db", CurrentContext: "pg", Contexts: contexts},
			cmdutil.StoreLocation{Postgres: "postgresql://db.example/other"}},
		{"--store over the current context", config.Config{DB: "/var/lib/q.db", Store: pg, CurrentContext: "pg", Contexts: contexts},
			cmdutil.StoreLocation{Postgres: pg}},
		{"--store over --context", config.Config{DB: "/var/lib/q.db", Store: pg, Context: "pg", Contexts: contexts},
			cmdutil.StoreLocation{Postgres: pg}},
		{"context with a server", config.Config{DB: "/var/lib/q.db", Context: "prod", Contexts: contexts},
			cmdutil.StoreLocation{Path: "/var/lib/q.db"}},
	} {
		got, err := cmdutil.ResolveStore(&tt.c)
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.want, got, tt.name)
	}

	_, err := cmdutil.ResolveStore(&config.Config{DB: "/var/lib/q.db", Context: "nope", Contexts: contexts})
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.ErrorContains(t, err, `context "nope" is not defined`)
}
