package buildinfo

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// releaseConfig is the part of .goreleaser.yaml the checks read.
type releaseConfig struct {
	Builds []struct {
		Flags        []string `yaml:"flags"`
		Ldflags      []string `yaml:"ldflags"`
		ModTimestamp string   `yaml:"mod_timestamp"`
	} `yaml:"builds"`
	Archives []struct {
		Files []string `yaml:"files"`
	} `yaml:"archives"`
}

// TestReleaseIsReproducible: the release build takes nothing from the time
// it runs — the build date it stamps in is the commit's, the binaries'
// timestamps are the commit's, paths are trimmed — so that anyone who
// builds a tag gets the same bytes; and the archives carry the licence.
func TestReleaseIsReproducible(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../.goreleaser.yaml")
	require.NoError(t, err)
	var c releaseConfig
	require.NoError(t, yaml.Unmarshal(raw, &c))
	require.NotEmpty(t, c.Builds)
	buildTime := regexp.MustCompile(`\{\{\s*\.(Date|Now|Timestamp)\b`)
	for _, b := range c.Builds {
		ldflags := strings.Join(b.Ldflags, " ")
		require.NotRegexp(t, buildTime, ldflags, "ldflags use the build's time")
		require.Regexp(t, `buildinfo\.Date=\{\{\s*\.CommitDate\s*\}\}`, ldflags)
		require.Regexp(t, `^\{\{\s*\.CommitTimestamp\s*\}\}$`, b.ModTimestamp)
		require.Contains(t, b.Flags, "-trimpath")
	}
	require.NotEmpty(t, c.Archives)
	for _, a := range c.Archives {
		require.True(t, slices.Contains(a.Files, "LICENSE"), "the archive carries the licence: %v", a.Files)
	}
	licence, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(licence), "MIT License\n"))
}
