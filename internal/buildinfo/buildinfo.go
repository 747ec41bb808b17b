// Package buildinfo tells which build of queuectl is running: its version,
// the commit it was built from and when.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version, Commit and Date describe a release build. They are set at link
// time by the release build (goreleaser's ldflags:
// -X github.com/queuectl/queuectl/internal/buildinfo.Version={{.Version}} and
// likewise Commit and Date) and never assigned at run time. They are the only
// package-level variables of queuectl: -X can set nothing else.
var (
	// Version is the release version, "dev" for a build without ldflags.
	Version = "dev"
	// Commit is the full commit hash the release was built from.
	Commit = ""
	// Date is the build time in RFC 3339.
	Date = ""
)

// Info is the resolved description of the running build.
type Info struct {
	Version   string `json:"version" yaml:"version"`
	Commit    string `json:"commit,omitempty" yaml:"commit,omitempty"`
	Date      string `json:"date,omitempty" yaml:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty" yaml:"modified,omitempty"` // built from a tree with uncommitted changes
	GoVersion string `json:"go_version" yaml:"go_version"`
	Platform  string `json:"platform" yaml:"platform"`
}

// Get returns the build's description. What the ldflags did not set is taken
// from the module and VCS information the go command embeds, so that
// `go install github.com/queuectl/queuectl/cmd/queuectl@v1.2.3` and a build in
// a git checkout also say what they are.
func Get() Info {
	bi, _ := debug.ReadBuildInfo() // nil when the binary carries none
	return resolve(Version, Commit, Date, bi)
}

// String returns a one-line description such as
// "queuectl 1.2.0 (commit 0123456789ab, built 2026-03-01T12:00:00Z)".
func String() string { return Get().String() }

// String renders i on one line; the commit is shortened to 12 characters.
func (i Info) String() string {
	var details []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if i.Modified {
			c += "-dirty"
		}
		details = append(details, "commit "+c)
	}
	if i.Date != "" {
		details = append(details, "built "+i.Date)
	}
	s := "queuectl " + i.Version
	if len(details) > 0 {
		s += " (" + strings.Join(details, ", ") + ")"
	}
	return s
}

// resolve fills what the linker did not set from bi, which may be nil.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	i := Info{
		Version:   version,
		Commit:    commit,
		Date:      date,
		GoVersion: runtime.Version(),
		Platform:  fmt.Sprintf("%s/%s", runtime.GOOS, runtime.GOARCH),
	}
	if i.Version == "" {
		i.Version = "dev"
	}
	if bi == nil {
		return i
	}
	if bi.GoVersion != "" {
		i.GoVersion = bi.GoVersion
	}
	// "(devel)" is what a build inside the module's own checkout reports.
	if i.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		i.Version = bi.Main.Version
	}
	if commit != "" {
		// The linker set the commit: VCS settings may describe another tree.
		return i
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			if i.Date == "" {
				i.Date = s.Value
			}
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}
