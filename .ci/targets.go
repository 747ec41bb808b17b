//go:build ignore

// targets prints the GOOS/GOARCH pairs that .goreleaser.yaml builds, one a
// line, so that CI cross-builds exactly the release's targets:
//
//	go run .ci/targets.go [.goreleaser.yaml]
//
// It reads each build's goos × goarch (goreleaser's defaults where a build
// names none) less its ignore list, and refuses what it does not understand
// rather than build fewer targets than the release.
package main

import (
	"fmt"
	"os"
	"slices"

	"go.yaml.in/yaml/v3"
)

type build struct {
	ID      string   `yaml:"id"`
	Skip    any      `yaml:"skip"`
	Goos    []string `yaml:"goos"`
	Goarch  []string `yaml:"goarch"`
	Ignore  []target `yaml:"ignore"`
	Targets []string `yaml:"targets"`
}

type target struct {
	Goos   string `yaml:"goos"`
	Goarch string `yaml:"goarch"`
}

func main() {
	path := ".goreleaser.yaml"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	var cfg struct {
		Builds []build `yaml:"builds"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		fail("%s: %v", path, err)
	}
	if len(cfg.Builds) == 0 {
		fail("%s: no builds", path)
	}
	var out []string
	for _, b := range cfg.Builds {
		if b.Skip != nil && b.Skip != false {
			continue
		}
		if len(b.Targets) > 0 {
			fail("%s: build %q: targets: is not supported here; list goos and goarch", path, b.ID)
		}
		goos, goarch := b.Goos, b.Goarch
		// goreleaser's defaults.
		if len(goos) == 0 {
			goos = []string{"linux", "darwin", "windows"}
		}
		if len(goarch) == 0 {
			goarch = []string{"386", "amd64", "arm64"}
		}
		if slices.Contains(goarch, "arm") {
			fail("%s: build %q: goarch arm (with its goarm variants) is not supported here", path, b.ID)
		}
		for _, goos1 := range goos {
			for _, arch := range goarch {
				if slices.ContainsFunc(b.Ignore, func(ig target) bool {
					return (ig.Goos == "" || ig.Goos == goos1) && (ig.Goarch == "" || ig.Goarch == arch)
				}) {
					continue
				}
				t := goos1 + "/" + arch
				if !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	for _, t := range out {
		fmt.Println(t)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "targets: "+format+"\n", args...)
	os.Exit(1)
}
