package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/karpgate/karpgate/internal/buildinfo"
)

// Platform is one GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are those a release ships for.
var Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Options describe one release.
type Options struct {
	// Version is what `karpgate version` reports and the artifacts are
	// named by: v1.2.3, or v0.0.0-snapshot.<commit> for a snapshot. krew
	// wants semantic versions, so that is what it must be.
	Version string
	// Commit is the commit built.
	Commit string
	// Date dates every archive entry and the SBOMs: the commit's time
	// (SOURCE_DATE_EPOCH), so that a rebuild gives the same bytes.
	Date time.Time
	// Root is the karpgate checkout; Out the folder the artifacts go to,
	// emptied first.
	Root, Out string
	// Platforms to build; nil means Platforms.
	Platforms []Platform
	// Go is the go command; "" means "go" on PATH.
	Go string
}

// Artifacts are what a release wrote, by file name under Options.Out.
type Artifacts struct {
	Archives  []string
	SBOMs     []string
	Chart     string
	Schema    string
	Krew      string
	Checksums string
}

// builtArchive is an archive written, with what the krew manifest needs.
type builtArchive struct {
	platform Platform
	name     string
	sha256   string
}

// binaryName is the binary in every archive; krew links it as
// kubectl-karpgate.
const binaryName = "karpgate"

var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// Build writes every artifact of a release into o.Out.
func Build(ctx context.Context, o Options) (*Artifacts, error) {
	if !semver.MatchString(o.Version) {
		return nil, fmt.Errorf("version %q is not a semantic version like v1.2.3 or v0.0.0-snapshot.abc1234; krew and Helm need one", o.Version)
	}
	if o.Commit == "" || o.Date.IsZero() || o.Root == "" || o.Out == "" {
		return nil, fmt.Errorf("a release needs a commit, a date, the checkout and an output folder")
	}
	if o.Platforms == nil {
		o.Platforms = Platforms
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if err := os.RemoveAll(o.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Out, "krew"), 0o755); err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(o.Root, "README.md"))
	if err != nil {
		return nil, err
	}
	schema, err := os.ReadFile(filepath.Join(o.Root, "config", "karpgate.schema.json"))
	if err != nil {
		return nil, err
	}
	a := &Artifacts{}
	var archives []builtArchive
	binaries, err := os.MkdirTemp("", "karpgate-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binaries)
	for _, p := range o.Platforms {
		bin := filepath.Join(binaries, p.OS+"-"+p.Arch, binaryName)
		if err := o.goBuild(ctx, p, bin); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("karpgate_%s_%s_%s.tar.gz", o.Version, p.OS, p.Arch)
		archive, err := tarGz([]file{
			{name: binaryName, mode: 0o755, data: data},
			{name: "README.md", mode: 0o644, data: readme},
			{name: "karpgate.schema.json", mode: 0o644, data: schema},
		}, o.Date)
		if err != nil {
			return nil, err
		}
		if err := o.write(name, archive); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(archive)
		archives = append(archives, builtArchive{platform: p, name: name, sha256: hex.EncodeToString(sum[:])})
		a.Archives = append(a.Archives, name)

		sbomName := name + ".sbom.spdx.json"
		doc, err := sbom(bin, strings.TrimSuffix(name, ".tar.gz"), fmt.Sprintf("%s/releases/download/%s/%s", Homepage, o.Version, sbomName), o.Version, o.Date)
		if err != nil {
			return nil, err
		}
		if err := o.write(sbomName, doc); err != nil {
			return nil, err
		}
		a.SBOMs = append(a.SBOMs, sbomName)
	}
	if a.Chart, err = o.chart(); err != nil {
		return nil, err
	}
	a.Schema = "karpgate.schema.json"
	if err := o.write(a.Schema, schema); err != nil {
		return nil, err
	}
	manifest, err := krewManifest(o.Version, archives)
	if err != nil {
		return nil, err
	}
	a.Krew = filepath.Join("krew", krewPluginName+".yaml")
	if err := o.write(a.Krew, manifest); err != nil {
		return nil, err
	}
	a.Checksums = "checksums.txt"
	return a, o.writeChecksums(a)
}

// goBuild builds the shipped binary as `make build` does, for p, with
// nothing of the machine in it: no paths (-trimpath, among
// buildinfo.GoBuildFlags), no VCS stamp (-buildvcs=false; the commit comes
// through -ldflags), no cgo, and no flags from the environment (GOFLAGS).
func (o Options) goBuild(ctx context.Context, p Platform, out string) error {
	ldflags := fmt.Sprintf("-s -w -X github.com/karpgate/karpgate/internal/buildinfo.Version=%s -X github.com/karpgate/karpgate/internal/buildinfo.Commit=%s", o.Version, o.Commit)
	args := append(append([]string{"build"}, buildinfo.GoBuildFlags()...), "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/karpgate")
	cmd := exec.CommandContext(ctx, o.Go, args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p, err, stderr.String())
	}
	return nil
}

// chart packages manifests/charts/karpgate as `helm package` lays it out
// (a karpgate/ folder in a tar.gz), at the release's version, with the
// archive's determinism: helm package dates every entry with the current
// time.
func (o Options) chart() (string, error) {
	dir := filepath.Join(o.Root, "manifests", "charts", "karpgate")
	chartVersion := strings.TrimPrefix(o.Version, "v")
	var files []file
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch rel {
		case "Chart.yaml":
			data, err = setLines(data, map[string]string{"version: ": chartVersion, "appVersion: ": o.Version})
		case "values.yaml":
			// The image the chart installs is the release's.
			data, err = setLines(data, map[string]string{"  tag: ": o.Version})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		files = append(files, file{name: "karpgate/" + filepath.ToSlash(rel), mode: 0o644, data: data})
		return nil
	})
	if err != nil {
		return "", err
	}
	pkg, err := tarGz(files, o.Date)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("karpgate-%s.tgz", chartVersion)
	return name, o.write(name, pkg)
}

// setLines gives the first line starting with each prefix a new value:
// the chart's version, appVersion and image tag.
func setLines(data []byte, values map[string]string) ([]byte, error) {
	lines := strings.Split(string(data), "\n")
	for prefix, value := range values {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
		if i < 0 {
			return nil, fmt.Errorf("no line starts with %q", prefix)
		}
		lines[i] = prefix + value
	}
	return []byte(strings.Join(lines, "\n")), nil
}

func (o Options) write(name string, data []byte) error {
	return os.WriteFile(filepath.Join(o.Out, name), data, 0o644)
}

// writeChecksums writes checksums.txt as sha256sum does, one line per
// artifact, sorted by name: `sha256sum -c checksums.txt` checks them.
func (o Options) writeChecksums(a *Artifacts) error {
	names := slices.Concat(a.Archives, a.SBOMs, []string{a.Chart, a.Schema, a.Krew})
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(o.Out, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), filepath.ToSlash(n))
	}
	return o.write(a.Checksums, []byte(b.String()))
}
