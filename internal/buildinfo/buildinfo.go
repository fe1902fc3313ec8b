// Package buildinfo holds what the binary knows about its own build. Version
// and Commit are stamped by the Makefile through -ldflags; a plain `go build`
// falls back to the module information the Go toolchain records.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X github.com/karpgate/karpgate/internal/buildinfo.Version=...".
var (
	Version = ""
	Commit  = ""
)

// GoBuildFlags returns the go build flags of every karpgate build: the
// Makefile's GO_BUILD_FLAGS (test/layout holds the two equal), which
// release/build.go and the tests' own builds take too. Go's build cache keys
// a compiled package by its flags, so builds that agree on them compile each
// package once between them. -trimpath keeps the machine's paths out of the
// binary; -dwarf=false skips the debug information that the -s -w link
// would throw away.
func GoBuildFlags() []string {
	return []string{"-trimpath", "-gcflags=all=-dwarf=false"}
}

// Info is the build description printed by `karpgate version`.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Read returns the build description, preferring ldflags over toolchain data.
func Read() Info {
	info := Info{Version: Version, Commit: Commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Commit == "" {
				info.Commit = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	return info
}
