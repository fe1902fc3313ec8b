package karpenterstack

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/karpgate/karpgate/internal/devcluster/crdsource"
)

// TestVersionsAgreeWithTheBuild keeps the releases this package runs equal
// to those the Makefile builds, the build-only modules pin, and the
// KWOKNodeClass CRD pins; and the newest release the default of `make run`.
func TestVersionsAgreeWithTheBuild(t *testing.T) {
	root, err := crdsource.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(parts ...string) string {
		data, err := os.ReadFile(filepath.Join(append([]string{root}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	makefile := read("Makefile")
	var versions []string
	for _, r := range Releases {
		versions = append(versions, r.Version)
	}
	tests := []struct {
		where, text, pattern, want string
	}{
		{"Makefile KARPENTER_VERSIONS", makefile, `(?m)^KARPENTER_VERSIONS\s*:=\s*(.+?)\s*$`, strings.Join(versions, " ")},
		{"Makefile KARPENTER_VERSION", makefile, `(?m)^KARPENTER_VERSION\s*\?=\s*(\S+)$`, Newest.Version},
		{"Makefile KWOK_VERSION", makefile, `(?m)^KWOK_VERSION\s*:=\s*(\S+)$`, KwokVersion},
		{"hack/harness/go.mod", read("hack", "harness", "go.mod"), requires("sigs.k8s.io/kwok"), KwokVersion},
		{"Makefile HARNESS_KARPENTER", makefile, `(?m)^HARNESS_KARPENTER\s*:=\s*(\S+)$`, Newest.Version},
	}
	for _, r := range Releases {
		module, pattern := buildModule(r)
		tests = append(tests,
			struct{ where, text, pattern, want string }{"hack/" + module + "/go.mod", read("hack", module, "go.mod"), pattern, r.Version},
			struct{ where, text, pattern, want string }{"hack/crds/" + string(r.NodeClass), read("hack", "crds", string(r.NodeClass), "go.mod"), requires("sigs.k8s.io/karpenter"), r.Version},
		)
	}
	for _, tt := range tests {
		m := regexp.MustCompile(tt.pattern).FindStringSubmatch(tt.text)
		if m == nil {
			t.Errorf("%s: no version found", tt.where)
			continue
		}
		if m[1] != tt.want {
			t.Errorf("%s says %s, the stack runs %s", tt.where, m[1], tt.want)
		}
	}
	for _, r := range Releases {
		pin, err := crdsource.ReadPin(filepath.Join(root, "hack", "crds", string(r.NodeClass), "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		if pin.Module != "sigs.k8s.io/karpenter" || pin.Version != r.Version {
			t.Errorf("the KWOKNodeClass pin of %s is %s@%s, want sigs.k8s.io/karpenter@%s", r, pin.Module, pin.Version, r.Version)
		}
		module, _ := buildModule(r)
		if sum := read("hack", module, "go.sum"); !strings.Contains(sum, pin.Module+" "+pin.Version+" "+pin.Hash) {
			t.Errorf("hack/%s/go.sum does not pin %s %s to the CRD pin's hash %s", module, pin.Module, pin.Version, pin.Hash)
		}
	}
}

// TestFindRelease accepts a version with or without its v and names the
// releases there are when it knows none.
func TestFindRelease(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"v1.0.8", "v1.0.8", ""},
		{"1.15.0", "v1.15.0", ""},
		{" v1.15.0 ", "v1.15.0", ""},
		{"v1.14.1", "", `version "v1.14.1": the local cluster runs Karpenter v1.15.0 or v1.0.8`},
		{"", "", "pick one of them"},
	} {
		r, err := FindRelease(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("FindRelease(%q) = %v, %v; want error %q", tt.in, r, err, tt.err)
			}
			continue
		}
		if err != nil || r.Version != tt.want {
			t.Errorf("FindRelease(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
		}
	}
	if Newest.Version != V1_15_0.Version {
		t.Errorf("Newest is %s, want v1.15.0", Newest)
	}
}

// requires matches a go.mod require of module, alone or in a block.
// buildModule is the build-only module under hack/ that builds r's kwok
// provider, and the pattern that finds the Karpenter version it builds:
// the newest release comes from hack/harness, which takes it from the
// replace it shares with karpgate's go.mod (alone there, in a block in
// hack/harness; its require names the version the aws provider asks for);
// an older one from its own module, hack/karpenter-v1.0.8 for v1.0.8.
func buildModule(r Release) (module, pattern string) {
	if r.Version == Newest.Version {
		return "harness", `(?m)^(?:replace)?\s*sigs\.k8s\.io/karpenter => sigs\.k8s\.io/karpenter (v\S+)`
	}
	return "karpenter-" + r.Version, requires("sigs.k8s.io/karpenter")
}

func requires(module string) string {
	return `(?m)^(?:require)?\s*` + regexp.QuoteMeta(module) + ` (v\S+)`
}

func TestFindBinariesNamesWhatIsMissing(t *testing.T) {
	t.Setenv(KarpenterDirEnv, filepath.Join(t.TempDir(), "no-karpenter"))
	t.Setenv(KwokEnv, filepath.Join(t.TempDir(), "no-kwok"))
	_, err := FindBinaries(t.TempDir(), V1_0_8)
	if err == nil {
		t.Fatal("no error for an empty assets folder")
	}
	for _, want := range []string{"kube-scheduler is missing", "kube-controller-manager is missing", "no-karpenter/v1.0.8/karpenter is missing", "no-kwok is missing", "make tools", "KARPENTER_VERSION=v1.0.8"} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(err.Error()) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestHeartbeatDelay checks that the heartbeat stage keeps everything but
// its delay when Options.NodeHeartbeat sets it, and that the default is the
// stage file's own.
func TestHeartbeatDelay(t *testing.T) {
	data, err := stages.ReadFile("stages/" + heartbeatStageFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		every            time.Duration
		wantMin, wantMax int64
	}{
		{10 * time.Second, 10000, 15000},
		{2 * time.Minute, 120000, 180000},
	} {
		out, err := withDelay(data, tt.every)
		if err != nil {
			t.Fatal(err)
		}
		var got, orig map[string]any
		if err := yaml.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &orig); err != nil {
			t.Fatal(err)
		}
		delay := got["spec"].(map[string]any)["delay"].(map[string]any)
		if delay["durationMilliseconds"] != float64(tt.wantMin) || delay["jitterDurationMilliseconds"] != float64(tt.wantMax) {
			t.Errorf("every %v: delay %v, want %d..%d ms", tt.every, delay, tt.wantMin, tt.wantMax)
		}
		if tt.every == 10*time.Second && !reflect.DeepEqual(got, orig) {
			t.Errorf("the default heartbeat differs from the stage file:\n%s\nwant\n%s", out, data)
		}
		delete(got["spec"].(map[string]any), "delay")
		delete(orig["spec"].(map[string]any), "delay")
		if !reflect.DeepEqual(got, orig) {
			t.Errorf("every %v: more than the delay changed:\n%s", tt.every, out)
		}
	}
}
