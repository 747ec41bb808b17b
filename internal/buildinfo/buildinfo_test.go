package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func vcsBuild(mainVersion string) *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/queuectl/queuectl", Version: mainVersion},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-02-03T04:05:06Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
}

func TestResolveFromLdflags(t *testing.T) {
	t.Parallel()

	i := resolve("1.2.0", "abcdef0123456789abcdef0123456789abcdef01", "2026-03-01T12:00:00Z", vcsBuild("(devel)"))
	require.Equal(t, "1.2.0", i.Version)
	require.Equal(t, "abcdef0123456789abcdef0123456789abcdef01", i.Commit)
	require.Equal(t, "2026-03-01T12:00:00Z", i.Date)
	require.False(t, i.Modified, "VCS settings of the build tree do not override a commit set by the linker")
	require.Equal(t, "queuectl 1.2.0 (commit abcdef012345, built 2026-03-01T12:00:00Z)", i.String())
}

func TestResolveFromVCS(t *testing.T) {
	t.Parallel()

	i := resolve("dev", "", "", vcsBuild("(devel)"))
	require.Equal(t, "dev", i.Version)
	require.Equal(t, "0123456789abcdef0123456789abcdef01234567", i.Commit)
	require.Equal(t, "2026-02-03T04:05:06Z", i.Date)
	require.True(t, i.Modified)
	require.Equal(t, "go1.26.0", i.GoVersion)
	require.Equal(t, "queuectl dev (commit 0123456789ab-dirty, built 2026-02-03T04:05:06Z)", i.String())
}

func TestResolveFromModuleVersion(t *testing.T) {
	t.Parallel()

	// go install …@v1.3.0 embeds the module version and no VCS settings.
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/queuectl/queuectl", Version: "v1.3.0"}}
	i := resolve("dev", "", "", bi)
	require.Equal(t, "v1.3.0", i.Version)
	require.Equal(t, "queuectl v1.3.0", i.String())

	// A version set by the linker wins over the module's.
	require.Equal(t, "1.4.0", resolve("1.4.0", "", "", bi).Version)
}

func TestResolveWithoutBuildInfo(t *testing.T) {
	t.Parallel()

	i := resolve("", "", "", nil)
	require.Equal(t, "dev", i.Version)
	require.Equal(t, runtime.Version(), i.GoVersion)
	require.Equal(t, runtime.GOOS+"/"+runtime.GOARCH, i.Platform)
	require.Equal(t, "queuectl dev", i.String())

	require.Equal(t, "queuectl dev (commit abc123)", Info{Version: "dev", Commit: "abc123"}.String())
	require.Equal(t, "queuectl dev (built 2026-01-01T00:00:00Z)", Info{Version: "dev", Date: "2026-01-01T00:00:00Z"}.String())
}

func TestString(t *testing.T) {
	t.Parallel()

	// In a test binary nothing is set by ldflags.
	s := String()
	require.True(t, strings.HasPrefix(s, "queuectl "), s)
	require.Equal(t, Get().String(), s)
}
