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
		BuildsInfo fileInfo      `yaml:"builds_info"`
		Files      []archiveFile `yaml:"files"`
	} `yaml:"archives"`
}

// archiveFile is an entry of an archive's files: a glob, or a src with
// the info its entries get.
type archiveFile struct {
	Src  string   `yaml:"src"`
	Info fileInfo `yaml:"info"`
}

type fileInfo struct {
	MTime string `yaml:"mtime"`
}

func (f *archiveFile) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&f.Src)
	}
	type plain archiveFile
	return n.Decode((*plain)(f))
}

// TestReleaseIsReproducible: the release build takes nothing from the time
// it runs — the build date it stamps in is the commit's, the binaries'
// timestamps are the commit's, paths are trimmed — so that anyone who
// builds a tag gets the same bytes; the archives' entries are dated by the
// commit too, and they carry the licence and the guides.
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
	commitDate := regexp.MustCompile(`^\{\{\s*\.CommitDate\s*\}\}$`)
	for _, a := range c.Archives {
		require.Regexp(t, commitDate, a.BuildsInfo.MTime, "the binary's entry is dated by the commit")
		var srcs []string
		for _, f := range a.Files {
			srcs = append(srcs, f.Src)
			require.Regexp(t, commitDate, f.Info.MTime, "the entries of %s are dated by the commit, not the checkout", f.Src)
		}
		require.True(t, slices.Contains(srcs, "LICENSE"), "the archive carries the licence: %v", srcs)
		require.True(t, slices.Contains(srcs, "docs/*.md"), "the archive carries the guides: %v", srcs)
	}
	licence, err := os.ReadFile("../../LICENSE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(licence), "MIT License\n"))
}
