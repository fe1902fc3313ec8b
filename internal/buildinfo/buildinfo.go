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
