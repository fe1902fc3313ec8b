package ci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/karpgate/karpgate/release"
	"github.com/karpgate/karpgate/test/testenv"
	"github.com/karpgate/karpgate/test/toolbin"
)

// TestReleaseSnapshot builds a snapshot release as `make release` does and
// checks it with the tools its users run: every archive holds the binary
// for its platform, stamped with the version, dated at the commit;
// sha256sum -c accepts checksums.txt; each SBOM lists every module `go
// version -m` finds in its binary; helm reads the chart; krew-index's
// validate-krew-manifest accepts the krew manifest and krew installs the
// plugin from this machine's archive, which the real kubectl then runs as
// `kubectl karpgate`; and a second build gives the same bytes.
func TestReleaseSnapshot(t *testing.T) {
	opts, a := snapshotRelease(t)
	version, commit, date, out := opts.Version, opts.Commit, opts.Date, opts.Out

	host := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", version, runtime.GOOS, runtime.GOARCH)
	// The host's binary outlives the subtest that unpacks it.
	var hostBinary string
	hostDir := t.TempDir()
	if len(a.Archives) != len(opts.Platforms) {
		t.Fatalf("archives %v, want one per platform of %v", a.Archives, opts.Platforms)
	}
	for _, p := range opts.Platforms {
		name := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", version, p.OS, p.Arch)
		t.Run(name, func(t *testing.T) {
			entries := readArchive(t, filepath.Join(out, name))
			var names []string
			for _, e := range entries {
				names = append(names, e.hdr.Name)
				if !e.hdr.ModTime.Equal(date) || e.hdr.Uid != 0 || e.hdr.Gid != 0 || e.hdr.Uname != "" {
					t.Errorf("%s: dated %v, owned by %d:%d %q; want %v and root with no names", e.hdr.Name, e.hdr.ModTime, e.hdr.Uid, e.hdr.Gid, e.hdr.Uname, date)
				}
			}
			if want := []string{"README.md", "karpgate", "karpgate.schema.json"}; !slices.Equal(names, want) {
				t.Fatalf("entries %v, want %v in that order", names, want)
			}
			bin := entries[1]
			if bin.hdr.Mode != 0o755 {
				t.Errorf("karpgate has mode %o, want 755", bin.hdr.Mode)
			}
			info, err := buildinfo.Read(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch || settings["CGO_ENABLED"] != "0" {
				t.Errorf("binary built with %v, want %s and no cgo", settings, p)
			}
			// -trimpath keeps -ldflags out of the build information (it may
			// hold paths), so the stamped version is looked for in the
			// binary itself; the host's also says it in karpgate version.
			if !bytes.Contains(bin.data, []byte(version)) {
				t.Errorf("the %s binary does not contain its version %s: -ldflags -X did not stamp it", p, version)
			}
			if _, vcs := settings["vcs.revision"]; vcs {
				t.Error("the binary records the checkout's VCS state; a release builds with -buildvcs=false")
			}
			if name == host {
				hostBinary = filepath.Join(hostDir, "karpgate")
				if err := os.WriteFile(hostBinary, bin.data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if hostBinary == "" {
		t.Fatalf("no archive for this machine (%s)", host)
	}

	t.Run("karpgate version names the build", func(t *testing.T) {
		got := runTool(t, hostBinary, "", "version", "-o", "json")
		var v struct{ Version, Commit, Platform string }
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatal(err)
		}
		if v.Version != version || v.Commit != commit || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("karpgate version says %+v", v)
		}
	})
	t.Run("sha256sum -c checksums.txt", func(t *testing.T) {
		got := runToolIn(t, out, "sha256sum", "", "-c", "--strict", a.Checksums)
		if n := strings.Count(got, ": OK"); n != len(a.Archives)+len(a.SBOMs)+3 {
			t.Errorf("sha256sum checked %d files:\n%s", n, got)
		}
	})
	t.Run("SBOM lists what go version -m finds", func(t *testing.T) {
		var doc struct {
			SPDXVersion string `json:"spdxVersion"`
			Packages    []struct {
				Name, VersionInfo string
			} `json:"packages"`
		}
		data, err := os.ReadFile(filepath.Join(out, host+".sbom.spdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, p := range doc.Packages {
			listed[p.Name+"@"+p.VersionInfo] = true
		}
		// A dep line names a module; a => line after it, the module that
		// replaces it, which is what the binary links.
		var linked []string
		for _, line := range strings.Split(runTool(t, "go", "", "version", "-m", hostBinary), "\n") {
			switch f := strings.Fields(line); {
			case len(f) >= 3 && f[0] == "dep":
				linked = append(linked, f[1]+"@"+f[2])
			case len(f) >= 3 && f[0] == "=>":
				linked[len(linked)-1] = f[1] + "@" + f[2]
			}
		}
		for _, m := range linked {
			if !listed[m] {
				t.Errorf("go version -m lists %s; the SBOM does not", m)
			}
		}
		deps := len(linked)
		if doc.SPDXVersion != "SPDX-2.3" || deps < 50 || !listed["github.com/karpgate/karpgate@"+version] || !listed["stdlib@"+runtime.Version()] {
			t.Errorf("SBOM %s with %d packages for %d modules; want SPDX-2.3 naming karpgate %s and the standard library", doc.SPDXVersion, len(doc.Packages), deps, version)
		}
	})
	t.Run("helm reads the chart", func(t *testing.T) {
		helm := toolbin.Find(t, "KARPGATE_HELM", "helm")
		chart := runTool(t, helm, "", "show", "chart", filepath.Join(out, a.Chart))
		if !strings.Contains(chart, "version: 0.0.0-snapshot.e2e") || !strings.Contains(chart, "appVersion: "+version) {
			t.Errorf("helm show chart:\n%s", chart)
		}
		rendered := runTool(t, helm, "", "template", "karpgate", filepath.Join(out, a.Chart), "--namespace", "karpgate")
		if !strings.Contains(rendered, ":"+version) {
			t.Errorf("the chart does not install the release's image %s", version)
		}
	})
	t.Run("krew validates and installs the plugin", func(t *testing.T) {
		manifest := filepath.Join(out, a.Krew)
		runTool(t, toolbin.Find(t, "KARPGATE_VALIDATE_KREW", "validate-krew-manifest"), "", "-manifest", manifest, "-skip-install")
		krewRoot := t.TempDir()
		krew := exec.Command(toolbin.Find(t, "KARPGATE_KREW", "krew"), "install", "--manifest", manifest, "--archive", filepath.Join(out, host))
		krew.Env = append(os.Environ(), "KREW_ROOT="+krewRoot)
		if got, err := krew.CombinedOutput(); err != nil {
			t.Fatalf("krew install: %v\n%s", err, got)
		}
		kubectl := exec.Command(filepath.Join(testenv.AssetsDir(t), "kubectl"), "karpgate", "version")
		kubectl.Env = append(os.Environ(), "PATH="+filepath.Join(krewRoot, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
		got, err := kubectl.CombinedOutput()
		if err != nil || !strings.Contains(string(got), "karpgate "+version) {
			t.Fatalf("kubectl karpgate version after krew install: %v\n%s", err, got)
		}
	})
	t.Run("a second build gives the same bytes", func(t *testing.T) {
		again := opts
		again.Out = t.TempDir()
		again.Platforms = []release.Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}
		b := buildRelease(t, again)
		for _, name := range slices.Concat(b.Archives, b.SBOMs, []string{b.Chart, b.Schema}) {
			first, _ := os.ReadFile(filepath.Join(out, name))
			second, err := os.ReadFile(filepath.Join(again.Out, name))
			if err != nil || !bytes.Equal(first, second) {
				t.Errorf("%s differs between two builds of the same commit (%v)", name, err)
			}
		}
	})
}

type archiveEntry struct {
	hdr  *tar.Header
	data []byte
}

func readArchive(t *testing.T, path string) []archiveEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header names %q dated %v; a reproducible archive has neither", zr.Name, zr.ModTime)
	}
	var entries []archiveEntry
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, archiveEntry{hdr: hdr, data: data})
	}
}

func runTool(t *testing.T, name, stdin string, args ...string) string {
	t.Helper()
	return runToolIn(t, "", name, stdin, args...)
}

func runToolIn(t *testing.T, dir, name, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
