package config_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/queuectl/queuectl/internal/config"
	"github.com/queuectl/queuectl/internal/domain"
)

func TestParseSize(t *testing.T) {
	t.Parallel()

	tests := map[string]config.Size{
		"10MiB":    10 << 20,
		"10MB":     10 << 20,
		"10mib":    10 << 20,
		"10 MiB":   10 << 20,
		" 10M ":    10 << 20,
		"512KiB":   512 << 10,
		"512KB":    512 << 10,
		"512k":     512 << 10,
		"1048576":  1 << 20,
		"1048576B": 1 << 20,
		"0":        0,
		"1GiB":     1 << 30,
		"1.5KiB":   1536,
		"0.5MiB":   512 << 10,
	}
	for in, want := range tests {
		got, err := config.ParseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}

	for _, bad := range []string{"", "MiB", "ten", "10XB", "10TiB", "-1", "-1MiB", "1e3", "1.2.3KiB", "10 Mi B", "NaN", "99999999999GiB"} {
		_, err := config.ParseSize(bad)
		require.ErrorIs(t, err, domain.ErrInvalid, bad)
		require.ErrorContains(t, err, `size "`+bad+`"`, "the error names the value")
	}
}

func TestSizeText(t *testing.T) {
	t.Parallel()

	var s config.Size
	require.NoError(t, s.UnmarshalText([]byte("512KiB")))
	require.Equal(t, config.Size(512<<10), s)
	require.ErrorIs(t, s.UnmarshalText([]byte("lots")), domain.ErrInvalid)
	require.Equal(t, config.Size(512<<10), s, "a failed parse leaves the value alone")

	b, err := json.Marshal(struct{ Max config.Size }{10 << 20})
	require.NoError(t, err)
	require.JSONEq(t, `{"Max":"10MiB"}`, string(b))
}

// TestSizeYAMLRoundTrip checks that every size config view prints reads back
// as the same number of bytes, so its output can serve as a config file.
func TestSizeYAMLRoundTrip(t *testing.T) {
	t.Parallel()

	type doc struct {
		MaxPayload config.Size `yaml:"max_payload"`
	}
	sizes := []config.Size{0, 1, 1023, 1024, 1536, 512 << 10, 1 << 20, 10 << 20, 1000000, 1500000, 10<<20 + 1, 3 << 30, 1<<40 + 5}
	for _, s := range sizes {
		out, err := yaml.Marshal(doc{s})
		require.NoError(t, err)

		var back doc
		require.NoError(t, yaml.Unmarshal(out, &back), string(out))
		require.Equal(t, s, back.MaxPayload, "%d bytes written as %s", int64(s), out)

		parsed, err := config.ParseSize(s.String())
		require.NoError(t, err)
		require.Equal(t, s, parsed, "String of %d bytes is %q", int64(s), s.String())
	}

	out, err := yaml.Marshal(doc{10 << 20})
	require.NoError(t, err)
	require.Equal(t, "max_payload: 10MiB\n", string(out), "round sizes keep their unit")
	out, err = yaml.Marshal(doc{512 << 10})
	require.NoError(t, err)
	require.Equal(t, "max_payload: 512KiB\n", string(out))
}
